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
