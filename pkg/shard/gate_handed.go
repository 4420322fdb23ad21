package shard

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
)

// ErrHandedOverUnassigned is the cause of a gate pass retried (quietly)
// over the absence of an object the member handed over by acknowledging
// its drain, while the object is not assigned to any member yet: the
// member keeps the key, so that a deletion before the sharder assigns the
// object again reaches its handlers.
var ErrHandedOverUnassigned = errors.New("handed over and not assigned yet")

// handedKeys are the keys whose drain the gate acknowledged and whose
// object has not been given to the handlers since, each with the
// resourceVersion of the acknowledgement. The member handed the object
// over, so the absence its cache reads next (the acknowledgement takes it
// out of the label-selected cache) is not a deletion; but until the
// sharder assigns the object to a member, no other member holds it, and
// a deletion then would reach no handler: the member keeps the key (see
// handedGone) until the object is assigned or gone.
type handedKeys struct {
	mu   sync.Mutex
	keys map[string]string
}

// set records that key's object was handed over by the acknowledgement
// that wrote resourceVersion rv.
func (h *handedKeys) set(key, rv string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.keys == nil {
		h.keys = map[string]string{}
	}
	h.keys[key] = rv
}

// get returns the resourceVersion of the acknowledgement that handed key's
// object over, and whether it was handed over.
func (h *handedKeys) get(key string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	rv, ok := h.keys[key]
	return rv, ok
}

// forget records that key's object is not (or no longer) handed over.
func (h *handedKeys) forget(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.keys, key)
}

// handedGone decides the pass over the absence of an object this member
// handed over by the acknowledgement at resourceVersion rv. Still
// unassigned (the sharder is between leaders, or slower than the user),
// the key is kept (a quiet retry): no member holds the object, and this
// one, which held it last, is the one to tell of its deletion. Assigned
// (to another member, or to this one, whose cache then has it), it is not
// this member's absence: refused and forgotten. Gone, its history after
// the acknowledgement tells: deleted before any member was assigned it,
// the handlers are told; assigned first, the deletion was that member's.
// A history the API server compacted away is an open question, not a
// deletion.
func (g *memberGate) handedGone(ctx context.Context, c *client.Client, key, rv string) (bool, error) {
	label := AssignmentLabel(g.m.ring.Name)
	// Live, the object is kept only while no member is assigned it: one
	// assigned to this member is in its cache, and its passes come from
	// there. In its history, an assignment to this member still leaves
	// the deletion this member's to tell.
	unassignedNow := func(labels map[string]string) error {
		if _, assigned := labels[label]; !assigned {
			return fmt.Errorf("shard: %s %s: %w", g.gvk.Kind, key, ErrHandedOverUnassigned)
		}
		return nil
	}
	unassigned := func(labels map[string]string) bool {
		id, assigned := labels[label]
		return !assigned || id == g.m.id
	}
	gone, err := g.absentSince(ctx, c, key, rv, controller.AbsentUID(ctx), unassignedNow, unassigned)
	if err == nil {
		// Decided (told or refused): the key is no longer handed over.
		g.handed.forget(key)
	}
	return gone, err
}
