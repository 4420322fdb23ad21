package dependents

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// Only the field manager's own annotation vouches. The informer cache
// holds the whole live object, managedFields stripped: a
// lariat.dev/depends-on annotation a user wrote (on an object the
// registration annotates with nothing, so no apply ever conflicts with it
// or repairs it) reads there like one the registration applied, and
// would forge a marker at the next start. So a marker the live objects
// name is confirmed, at the first resync only and only for a marker some
// owner asks about, by reading the naming objects from the API server
// with their managedFields, until one holds the marker in the annotation
// the field manager's Apply entry owns (kubedescriptor.OwnedProjection):
// a value a user changed is owned by the user, not by the field manager.
// The cost is one GET per marker so confirmed (more only when the first
// objects read do not vouch), once per start. A read that fails does not
// judge: the resync is not committed, and the loop tries it again.

// vouchesFor returns the vouches of a beforeRestart of h: it reads obj
// again, with its managedFields, under ctx.
func (h *loopHandler[T]) vouchesFor(ctx context.Context) func(obj runtime.Object, markerKey string) (bool, error) {
	return func(obj runtime.Object, markerKey string) (bool, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return false, nil
		}
		gvk, err := h.build.gvk(obj)
		if err != nil {
			return false, err
		}
		ctx, cancel := context.WithTimeout(ctx, kubedescriptor.DefaultTimeout)
		defer cancel()
		live, err := h.get(ctx, gvk, m.GetNamespace(), m.GetName())
		if err != nil || live == nil {
			return false, err // gone since the informers listed it: no evidence
		}
		lm, err := meta.Accessor(live)
		if err != nil || lm.GetUID() != m.GetUID() || lm.GetDeletionTimestamp() != nil ||
			lm.GetLabels()[kubedescriptor.LabelManagedBy] != h.fieldManager || heldWithout(lm)[markerKey] {
			return false, nil
		}
		u, ok, err := kubedescriptor.OwnedProjection(live, gvk, h.fieldManager)
		if err != nil || !ok {
			return false, err
		}
		return slices.Contains(kubedescriptor.DependsOnKeys(u), markerKey), nil
	}
}
