package kubebridge

// The loop never goes back in time.
//
// The loop's state changes in two ways: a change event sets one object, a
// snapshot (a KubeResync, or the fresh copy that Options.RefreshState hands
// healing and requested resyncs) replaces everything. Snapshots are not
// always processed in the order they were read: RefreshState reads the
// caches when the loop gets to the resync, after changes that are queued
// behind it were read, and healing resyncs and follow-ups overtake queued
// events altogether. Applied blindly, a change read before the snapshot
// would move an object back (a handler sees x=7, then 7->6, then 6->7),
// resurrect one the snapshot no longer has, or "create" one it has.
//
// So every cache read the bridge hands the loop gets a position: the
// bridge counts, under its lock, every change it pushes and every snapshot
// it takes. An informer's cache only moves forward, and all of these reads
// happen under that same lock, so a read at a later position sees every
// key as it was at an earlier one, or newer. When the loop's state is
// replaced by a snapshot, the bridge records the snapshot's position
// (applied); a change from an earlier position is then superseded: its
// ApplyState leaves the state alone and the loop calls no handler for it
// (eventloop.SupersedableEvent). A KubeResync from an earlier position than
// the state it would replace keeps the newer state instead. What handlers
// saw last is therefore always the loop's state, and the PrevValue of the
// next change is that state.
//
// Positions rather than resourceVersions: a resourceVersion is opaque
// (the API conventions tell clients not to compare them), and the order
// that matters here is not the API server's but the order in which the
// bridge read its caches, which the lock gives for free. No
// resourceVersion is parsed or compared for order; the bridge only tests
// them for equality, to skip re-sending what the loop already has.

// overtaken reports whether the loop's state was last replaced by a
// snapshot read after position pos, which then includes what was read at
// pos. Only the loop goroutine replaces the state; applied is atomic so
// that nothing else has to know that.
func (b *Bridge) overtaken(pos uint64) bool {
	return b != nil && pos < b.applied.Load()
}
