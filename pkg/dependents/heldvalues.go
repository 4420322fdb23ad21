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
type heldValues struct {
	mu     sync.Mutex
	values map[string]any
	// was holds, during a transaction, the value each key changed in it
	// held before (nil: none), so that one not committed is undone (see
	// undo.go).
	was map[string]any
}

// set records v, a held owner's value at key.
func (s *heldValues) set(key string, v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.values == nil {
		s.values = map[string]any{}
	}
	s.save(key)
	s.values[key] = v
}

// drop forgets the held value at key.
func (s *heldValues) drop(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.save(key)
	delete(s.values, key)
}

// save records the value at key before the transaction first changes it;
// with mu held.
func (s *heldValues) save(key string) {
	if s.was == nil {
		return
	}
	if _, ok := s.was[key]; !ok {
		s.was[key] = s.values[key]
	}
}

// begin starts recording a transaction's changes.
func (s *heldValues) begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.was = map[string]any{}
}

// commit keeps the transaction's changes.
func (s *heldValues) commit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.was = nil
}

// rollback undoes the transaction's changes.
func (s *heldValues) rollback() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, v := range s.was {
		if v == nil {
			delete(s.values, key)
		} else {
			s.values[key] = v
		}
	}
	s.was = nil
}

// is tells whether v is the held value at key.
func (s *heldValues) is(key string, v any) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
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
