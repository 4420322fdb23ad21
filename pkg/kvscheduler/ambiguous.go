package kvscheduler

import "fmt"

// keepAmbiguous handles the delete of n, a value the southbound holds
// under a key no single descriptor claims (ErrAmbiguousKey): no
// descriptor can delete it, and taking it for deleted (as a property,
// which has no descriptor) would report absent what a read just found.
// It stays held as it is, INVALID with the key's error, and the
// transaction fails naming it; no operation is recorded, since none ran.
func (w *walker) keepAmbiguous(n *node) {
	err := fmt.Errorf("kvscheduler: %s is held in the southbound and cannot be deleted: %w", n.key, n.dErr())
	if n.state != Invalid || n.err == nil {
		w.s.dirty(n)
	}
	n.state, n.err = Invalid, n.dErr()
	w.rec.Errors = append(w.rec.Errors, KeyError{Key: n.key, Operation: OpDelete, Err: err})
	w.topErr = true
}

// ambiguousUnreported handles n, held under a key two descriptors claim
// (no descriptor is its own, so no single read settles it): it is gone
// when every descriptor claiming the key read without error and none
// reported it. A claimer that cannot read, or did not, leaves it as it is.
func (s *Scheduler) ambiguousUnreported(w *walker, n *node, missing []string) []string {
	if n.readGen >= s.readSince || !s.g.has(n) {
		return missing
	}
	for _, d := range s.reg.order {
		if d.selects(n.key) && (d.Retrieve == nil || s.unread[d.Name] != nil) {
			return missing
		}
	}
	return s.unreported(w, n, missing)
}
