package shard

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

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
	uid := controller.AbsentUID(ctx)
	live, err := g.get(ctx, c, key)
	switch {
	case err == nil && (uid == "" || live.GetUID() == uid):
		if _, assigned := live.GetLabels()[AssignmentLabel(g.m.ring.Name)]; !assigned {
			return false, controller.RetryQuietly(fmt.Errorf("shard: %s %s: %w", g.gvk.Kind, key, ErrHandedOverUnassigned))
		}
		g.handed.forget(key)
		g.m.metrics.refuse(g.gvk, refusedUncached)
		return false, nil
	case err != nil && !apierrors.IsNotFound(err):
		return false, err
	}
	unassigned := func(labels map[string]string) bool {
		id, assigned := labels[AssignmentLabel(g.m.ring.Name)]
		return !assigned || id == g.m.id
	}
	gone, err := g.wentWhileHeld(ctx, c, key, rv, uid, unassigned)
	if err != nil {
		return false, err
	}
	g.handed.forget(key)
	if !gone {
		g.m.metrics.refuse(g.gvk, refusedUncached)
		return false, nil
	}
	g.m.metrics.admit(g.gvk)
	return true, nil
}
