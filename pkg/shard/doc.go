// Package shard spreads the objects of chosen kinds over the replicas of an
// operator, so that each replica caches and handles only its share.
//
// Replicas form a ring: each holds a member Lease of its own, and one of
// them, elected, is the ring's sharder. The sharder assigns every object of
// a sharded kind to a live member by rendezvous hashing of the object's key
// (children hash by their controlling owner's key, so they follow it) and
// writes the member's ID as a label on the object; each member's informers
// select only that label value. Moving an object from a live member to
// another is a handover in two steps: the sharder marks the object
// draining, the member stops handling it, removes its assignment and
// records its release in the object's trail annotation (it acknowledges in
// the worker that holds the object's key, so no handler of that member
// runs for it afterwards), and only then does the sharder assign it to the
// new member. The trail, which only the sharder and the members write,
// names the member an object is on: labels written by anyone else move
// nothing (a member refuses an object its trail does not give it, and the
// sharder writes the trail's member back). A member whose lease expired
// stopped writing before it expired (its writes are fenced by its renew
// deadline), so its objects are reassigned directly. docs/replicas.md tells the whole story
// and the timing it relies on.
//
// A member's ID lives for one term of membership: once its Lease was
// released, deleted or expired, the sharder may be moving its objects one
// patch at a time, so the ID must never be live again (a replica back
// under it would list and handle objects being handed to others). Every
// Member draws an identity of its own, Member.Run runs one term and does
// not campaign again, and Join runs a replica's terms one after another,
// each with a new Member and a new factory built from it: unlike a
// leader's, a sharded factory is not started again, since its selector
// names a dead ID. Dead members' Leases are deleted by the sharder only,
// once no object names the ID and SharderOptions.LeaseRetention passed:
// a member's creates are stamped with its term, and the ring's binding
// (InstallTermPolicy) refuses a create of a term whose Lease is released
// or ended (the sharder ends an expired Lease before it moves the
// member's objects), which it can only while the Lease exists.
//
// A Ring names the ring, the namespace of its Leases and its kinds; the
// sharder and every member are given the same one. NewSharder builds the
// ring's sharder; every replica runs it, and the one elected on
// SharderLeaseName does the work, its writes fenced by that election. It
// decides on no object of a kind whose view has not synced (a kind it
// cannot list is named in a warning every SharderOptions.SyncTimeout, and
// holds up no other kind), changes nothing while its view of the
// member Leases is broken or being listed again (until the whole list is
// in its store), or while no member is live, and it moves an
// object directly only off a member whose expiry a read of its Lease from
// the API server confirmed. It assigns objects only to members live by
// the evidence of the API server: a renewTime within the lease duration
// plus SharderOptions.ClockSkew, or a renewal it saw arrive, and a read of
// the Lease that agrees; its first sight of a Lease is not a renewal, so a
// sharder elected after another crashed revives no dead member.
package shard
