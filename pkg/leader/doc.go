// Package leader runs work while holding a Kubernetes Lease, so that of
// several replicas of an operator only one writes at a time, and a standby
// takes over when the leader stops or is cut off.
//
// It builds on client-go's tools/leaderelection (a resourcelock.LeaseLock,
// renewed every RetryPeriod) and changes what happens around it:
//
//   - Losing the lease ends the work's context; the process does not exit.
//     The replica becomes a candidate again, and when it wins again the same
//     function runs again (Lariat's factories can be started again after
//     their context ended).
//   - Ending Run's context ends the work's context, waits for the function
//     to return, and only then releases the lease (ReleaseOnCancel): a
//     standby takes over at once on a rolling upgrade, and never while the
//     old leader is still stopping.
//   - The work's context ends no later than the renew deadline, counted from
//     the renewTime the last successful renewal recorded in the Lease
//     (taken before that renewal was sent, and what standbys and the
//     sharder count the lease duration from); Fence makes a
//     rest.Config whose writes are refused from that moment on, and whose
//     writes and reads of one object issued before it end then, whatever
//     context the handler gave them. With a factory built from
//     FactoryOptions, writes of an object being handled carry the
//     resourceVersion of the handler's copy as a precondition, so a write
//     delayed in the network past the term fails with a conflict once
//     another replica wrote the object.
//   - Creates through Fence's config carry the term they were issued in
//     (a term ID the Elector writes into the Lease's labels with every
//     acquisition and renewal). InstallTermPolicy installs a
//     ValidatingAdmissionPolicy, with the Lease as its parameter, that
//     refuses a stamped create once the Lease is in another term or gone:
//     a create delayed in the network past the term does not land after
//     the next leader decided the object should not exist. It judges only
//     creates sent by the user the stamp names (the fence's own), so a
//     user's copy or a restore of such an object is never refused.
//
// # Timing
//
// A renewal sent at time S and accepted by the API server is seen by every
// other candidate at some time O ≥ S (it cannot be seen before it was sent).
// A candidate takes the lease only once it has seen no change for
// LeaseDuration, so not before O + LeaseDuration ≥ S + LeaseDuration. Every
// renewal is a change a candidate sees: it writes a new renewTime, which the
// API server keeps to the microsecond, and this package's candidates compare
// it to the microsecond (client-go's own lock compares whole seconds, so that
// renewals within one second look unchanged and a candidate would take over
// up to a second early; every replica on a Lease must use this package). The
// leader's work context ends, and its fenced writes are refused, from
// S + RenewDeadline on. RenewDeadline < LeaseDuration, so the old leader has
// stopped issuing writes LeaseDuration − RenewDeadline (5 s with the
// defaults) before anyone else can lead; that margin absorbs clock-rate
// differences between the machines and the time a write issued just before
// the deadline takes to reach the API server. Only durations on each
// machine's own monotonic clock are compared, never wall clocks.
//
// Leases store their duration in whole seconds, so LeaseDuration must be a
// whole number of seconds (New refuses others): a 1.5 s lease would be
// stored as 1 s and be taken before a 1.2 s renew deadline passed.
//
// # Porting from wrangler
//
// wrangler's leader.RunOrDie(ctx, namespace, name, client, cb) becomes
// Run(ctx, client.CoordinationV1(), namespace, name, fn), which returns an
// error instead of exiting, and its callbacks run again after a lost lease
// is won back. A Manager collects several OnLeader callbacks, like
// wrangler's leader manager.
package leader
