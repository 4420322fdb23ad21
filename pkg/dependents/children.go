package dependents

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// How the loop reads a change of an object of the registration's kinds:
// what it records of it, and when the change is damage to repair.

// childChanged records a change of an object in the loop's picture, pushes
// a repair when it was deleted behind the scheduler's back, and returns
// the owner to compute again ("" for none) and the owners refused the
// object, computed again too: the change may be the object being freed
// (deleted once its owner let it go).
func (h *loopHandler[T]) childChanged(change *kubebridge.KubeStateChange, txn eventloop.UpdateOperations) (string, []string, error) {
	key, err := h.build.key(changedObject(change))
	if err != nil {
		return "", nil, nil
	}
	refused := h.refusedOrder(key)
	// The scheduler's own deletes are done (and its state changed) before
	// the loop sees them: a value it still holds as created was deleted
	// behind its back. So was one whose UID changed (deleted and made
	// again, by hand or by another tool, seen as one change): the object
	// there now is not the one the scheduler created. Until the repair has
	// read it as it reads any object it did not make, it is not in the
	// loop's picture: what depends on the object is not judged ready on it.
	gone := change.NewValue == nil || replaced(change.PrevValue, change.NewValue)
	mended := gone && h.childOf[key] != "" && h.sched.GetValueStatus(key).State == kvscheduler.Configured
	live := change.NewValue
	if mended {
		live = nil
	}
	h.seen(key, live)
	if mended {
		reason := "deleted"
		if change.NewValue != nil {
			reason = "replaced"
		}
		if err := txn.PushFollowUp(&repair{key: key, reason: reason}); err != nil {
			return "", nil, err
		}
	} else if h.drifted(key, change.PrevValue, change.NewValue) {
		if err := txn.PushFollowUp(&repair{key: key, reason: "changed"}); err != nil {
			return "", nil, err
		}
	}
	return h.childOf[key], refused, nil
}

// changedObject is the object a change is of: its new value, or the last
// one when it was deleted.
func changedObject(change *kubebridge.KubeStateChange) runtime.Object {
	if change.NewValue != nil {
		return change.NewValue
	}
	return change.PrevValue
}

// replaced tells whether prev and cur are two objects under one name: one
// deleted and another created in its place.
func replaced(prev, cur runtime.Object) bool {
	if prev == nil || cur == nil {
		return false
	}
	p, err1 := meta.Accessor(prev)
	c, err2 := meta.Accessor(cur)
	return err1 == nil && err2 == nil && p.GetUID() != "" && p.GetUID() != c.GetUID()
}
