package dependents

import (
	"context"
	"sync"

	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Held values are never written, neither updated nor created. A held owner's values are snapshots of
// its objects as the restart found them (see held.go), not what anyone
// asked for: its handler does not answer. So the Kubernetes descriptors
// never apply one (a repair of drift, or the periodic healing, would
// otherwise write the snapshot back over a user's edit, and take the
// fields the user set), and the dependencies a held object's annotations
// name order it but never take it down: a marker of another owner it
// RequiresOwner, absent while that owner is not ready, would otherwise
// have the scheduler delete it. It is still deleted when its owner goes
// (the value withdrawn), in reverse order of creation.

// heldValues is the set of the values held owners put, by key: the loop's
// goroutine sets them, the scheduler's calls the descriptors that read
// them. A value is held while it is the very value the loop put for a
// held owner (the same pointer): a computed value put in its place later
// is not, even before the entry is dropped.
//
// The scheduler acts on its own during the loop's transactions too (a
// retry that makes a dependency available creates the values that waited
// on it), with the values the last committed transaction gave it; the
// transaction's own operations run with its values. So a transaction's
// changes are pending (see undo.go), and a value is held when it is the
// committed value or the pending one: a held value the transaction drops
// stays held until it commits, and one it sets is held at once.
type heldValues struct {
	mu     sync.Mutex
	values map[string]any
	// pending holds, during a transaction, the values it set (nil: it
	// dropped the key); nil outside a transaction.
	pending map[string]any
}

// set records v, a held owner's value at key.
func (s *heldValues) set(key string, v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stage(key, v)
}

// drop forgets the held value at key.
func (s *heldValues) drop(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stage(key, nil)
}

// stage sets (v nil: drops) the value at key: pending during a
// transaction, else at once; with mu held.
func (s *heldValues) stage(key string, v any) {
	switch {
	case s.pending != nil:
		s.pending[key] = v
	case v == nil:
		delete(s.values, key)
	default:
		if s.values == nil {
			s.values = map[string]any{}
		}
		s.values[key] = v
	}
}

// begin starts a transaction: its changes are pending until commit.
func (s *heldValues) begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = map[string]any{}
}

// commit keeps the transaction's changes.
func (s *heldValues) commit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	pending := s.pending
	s.pending = nil
	for key, v := range pending {
		s.stage(key, v)
	}
}

// rollback drops the transaction's changes.
func (s *heldValues) rollback() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = nil
}

// is tells whether v is the held value at key: the committed one, or the
// one the transaction under way set.
func (s *heldValues) is(key string, v any) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.pending[key]; ok && p != nil && p == v {
		return true
	}
	held, ok := s.values[key]
	return ok && held == v
}

// southbound is what a registration shares with its Kubernetes
// descriptors: where their writes landed (see updating.go) and the held
// values they never write.
type southbound struct {
	landings *kubedescriptor.Landings
	held     *heldValues
}

func newSouthbound() southbound {
	return southbound{landings: &kubedescriptor.Landings{}, held: &heldValues{}}
}

// wrap makes d, a Kubernetes descriptor, leave held values as they are:
// their dependencies order them only, and neither updating one to its
// held value nor creating one writes anything. A held object deleted by
// hand is not created again from the restart's snapshot (nobody asked
// for it while the handler does not answer); its owner's next successful
// computation puts a value that is not held, which is applied.
func (s *heldValues) wrap(d *kvscheduler.Descriptor) {
	deps, create, update := d.Dependencies, d.Create, d.Update
	d.Dependencies = func(key string, v any) []kvscheduler.Dependency {
		out := deps(key, v)
		if len(out) > 0 && s.is(key, v) {
			out = append([]kvscheduler.Dependency(nil), out...)
			for i := range out {
				out[i].Kind = kvscheduler.OrderingOnly
			}
		}
		return out
	}
	d.Create = func(ctx context.Context, key string, v any) (any, error) {
		if s.is(key, v) {
			// No UID known: a delete of it (its owner gone) reads the
			// object first, and leaves alone one that is not this
			// manager's.
			return nil, nil
		}
		return create(ctx, key, v)
	}
	d.Update = func(ctx context.Context, key string, old, v any, md any) (any, error) {
		if s.is(key, v) {
			return md, nil // a snapshot nobody asked for is never written back
		}
		return update(ctx, key, old, v, md)
	}
}

// unhold drops the held values of d, when it is a held owner's (or an
// owner's being deleted) desired state that is replaced or forgotten.
func (h *loopHandler[T]) unhold(d *desired) {
	if d == nil || !d.held && !d.deleting {
		return
	}
	for objKey := range d.objectKeys() {
		h.held.drop(objKey)
	}
}
