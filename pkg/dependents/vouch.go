package dependents

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/pager"

	"github.com/lariat-dev/lariat/pkg/client"
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
// The objects are read by one list per kind and namespace (of the field
// manager's label, in pages), the first time an object of that kind and
// namespace is asked about, not by one GET per marker: with a thousand
// latched owners, a thousand GETs one after another held the first resync
// up. An object the list does not hold is gone since the informers
// listed it: no evidence. A list that fails does not judge: the resync is
// not committed, and the loop tries it again.

// liveLister reads, from the API server, the objects of gvk in namespace
// with the label selector, with their managedFields, by name.
type liveLister func(ctx context.Context, gvk schema.GroupVersionKind, namespace, selector string) (map[string]runtime.Object, error)

// newLiveLister lists through clients, in pages (client-go's pager, which
// lists whole when a page's continue token expired).
func newLiveLister(clients *client.SharedClientFactory) liveLister {
	return func(ctx context.Context, gvk schema.GroupVersionKind, namespace, selector string) (map[string]runtime.Object, error) {
		c, err := clients.ForKind(gvk)
		if err != nil {
			return nil, err
		}
		p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			_, list, err := clients.NewObjects(gvk)
			if err != nil {
				return nil, err
			}
			ctx, cancel := context.WithTimeout(ctx, kubedescriptor.DefaultTimeout)
			defer cancel()
			if err := c.List(ctx, namespace, list, opts); err != nil {
				return nil, err
			}
			return list, nil
		})
		list, _, err := p.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return nil, err
		}
		out := map[string]runtime.Object{}
		err = meta.EachListItem(list, func(item runtime.Object) error {
			if m, err := meta.Accessor(item); err == nil {
				out[m.GetName()] = item
			}
			return nil
		})
		return out, err
	}
}

// listKey is a kind and a namespace the vouches have listed.
type listKey struct {
	gvk       schema.GroupVersionKind
	namespace string
}

// vouchesFor returns the vouches of a beforeRestart of h: it reads obj
// again, with its managedFields, under ctx, from a list of its kind and
// namespace taken once per returned func.
func (h *loopHandler[T]) vouchesFor(ctx context.Context) func(obj runtime.Object, markerKey string) (bool, error) {
	listed := map[listKey]map[string]runtime.Object{}
	selector := labels.SelectorFromSet(labels.Set{kubedescriptor.LabelManagedBy: h.fieldManager}).String()
	return func(obj runtime.Object, markerKey string) (bool, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return false, nil
		}
		gvk, err := h.build.gvk(obj)
		if err != nil {
			return false, err
		}
		key := listKey{gvk: gvk, namespace: m.GetNamespace()}
		objs, ok := listed[key]
		if !ok {
			if objs, err = h.list(ctx, gvk, key.namespace, selector); err != nil {
				return false, err
			}
			listed[key] = objs
		}
		live := objs[m.GetName()]
		if live == nil {
			return false, nil // gone since the informers listed it: no evidence
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
