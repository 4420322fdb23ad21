package apply

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/client"
)

// objectID is an object's identity: group, kind, namespace and name. The
// version is left out on purpose: the same object read through two versions
// is one object, and keying by version would prune what was just applied
// through another.
type objectID struct {
	gk        schema.GroupKind
	namespace string
	name      string
}

func idOf(k ObjectKey) objectID {
	return objectID{gk: k.GVK.GroupKind(), namespace: k.Namespace, name: k.Name}
}

// prune deletes (or, dry-running, lists) the set's objects of one kind that
// are not kept. It lists the kind through its preferred served version, in
// each of the namespaces the inventory records for it. Objects applied for
// a newer owner of the same name are spared (see ownerCheck) and returned
// apart.
func (a *Applier) prune(ctx context.Context, id *setIdentity, gk schema.GroupKind, recorded map[string]bool, keep map[objectID]bool, dryRun bool) (deleted, spared []ObjectKey, err error) {
	c, items, err := a.listSet(ctx, id, gk, recorded)
	if err != nil {
		return nil, nil, fmt.Errorf("prune %s: %w", gk, err)
	}
	if c == nil {
		return nil, nil, nil // the kind is gone from the cluster, and its objects with it
	}
	gvk := c.GroupVersionKind()
	// A check of its own per kind: the owner is read after this kind's
	// list, so that every object listed was there before the read.
	owner := &ownerCheck{a: a, id: id}
	var errs []error
	for _, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			errs = append(errs, fmt.Errorf("prune %s: %w", gk, err))
			continue
		}
		key := ObjectKey{GVK: gvk, Namespace: m.GetNamespace(), Name: m.GetName()}
		if keep[idOf(key)] {
			continue
		}
		if !a.applied(m) {
			// Labelled as the set's, but never applied by this applier's
			// field manager: another writer's (another operator whose set
			// has the same owner and ID, or a copy made by hand).
			spared = append(spared, key)
			continue
		}
		spare, err := owner.spares(ctx, m)
		if err != nil {
			errs = append(errs, fmt.Errorf("prune %s: %w", key, err))
			continue
		}
		if spare {
			spared = append(spared, key)
			continue
		}
		if dryRun {
			deleted = append(deleted, key)
			continue
		}
		spare, err = a.deleteFromSet(ctx, c, id, key, m)
		if spare {
			spared = append(spared, key)
		} else {
			deleted = append(deleted, key)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("prune %s: %w", key, err))
		}
	}
	return deleted, spared, errors.Join(errs...)
}

// applied reports whether this applier's field manager applied (or
// updated) the object: only such objects are pruned. The set's label says
// which set an object belongs to, and two operators (two field managers)
// whose sets have the same owner and ID share it; the managed fields say
// who wrote the object. An object whose managed fields this manager has
// lost entirely (another writer took every field it applied) is spared
// too: it is no longer this applier's doing.
func (a *Applier) applied(m metav1.Object) bool {
	for _, e := range m.GetManagedFields() {
		if e.Manager == a.opts.FieldManager {
			return true
		}
	}
	return false
}

// pruneAttempts bounds how often deleteFromSet reads an object that keeps
// changing again; the next Apply tries again.
const pruneAttempts = 3

// deleteFromSet deletes a listed object of the set, only as it was listed:
// the delete is preconditioned on its UID (an object recreated under the
// same name is someone else's) and resourceVersion. An object changed since
// the list is read again and deleted only while it still carries the set's
// label: one taken out of the set meanwhile (its label removed, or taken
// over by another set) stays. So does one now applied for another owner
// than when it was listed, or no longer by this field manager: the
// prune's owner check judged the listed object, and an owner created again
// under the set's name may have applied it since (the object is then
// reported spared, and stays in the inventory).
func (a *Applier) deleteFromSet(ctx context.Context, c *client.Client, id *setIdentity, key ObjectKey, listed metav1.Object) (spared bool, err error) {
	uid, rv := listed.GetUID(), listed.GetResourceVersion()
	owner := appliedFor(listed, id.ownerID)
	background := metav1.DeletePropagationBackground
	for attempt := 1; ; attempt++ {
		err := c.Delete(ctx, key.Namespace, key.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}, PropagationPolicy: &background})
		if err == nil || apierrors.IsNotFound(err) {
			return false, nil
		}
		if !apierrors.IsConflict(err) || attempt == pruneAttempts {
			return false, err
		}
		current, _, err := a.clients.NewObjects(c.GroupVersionKind())
		if err != nil {
			return false, err
		}
		err = c.Get(ctx, key.Namespace, key.Name, current, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		m, err := meta.Accessor(current)
		if err != nil {
			return false, err
		}
		if m.GetUID() != uid || !id.labelledBy(m.GetLabels()[LabelSet]) {
			return false, nil // replaced, or no longer the set's
		}
		if appliedFor(m, id.ownerID) != owner || !a.applied(m) {
			return true, nil // applied for another owner, or by another writer, since the check
		}
		rv = m.GetResourceVersion()
	}
}

// listSet lists the set's objects of gk, through the kind's preferred
// served version, where the inventory says they are. It returns a nil client
// when the kind is not served: its objects went with it (a CRD's objects are
// deleted with the CRD). A listing that answers NotFound means the mapping
// used is stale (the CRD was deleted, or moved versions): discovery is re-read
// for the kind (rate limited) and the kind mapped again, once. A kind the
// mapper does not know counts as not served only when a live discovery read
// that did not fail for its group agrees.
func (a *Applier) listSet(ctx context.Context, id *setIdentity, gk schema.GroupKind, recorded map[string]bool) (*client.Client, []runtime.Object, error) {
	for retried := false; ; retried = true {
		c, err := a.clients.ForKind(gk.WithVersion(""))
		if meta.IsNoMatchError(err) {
			return nil, nil, a.confirmNotServed(ctx, gk)
		}
		if err != nil {
			return nil, nil, err
		}
		var items []runtime.Object
		for _, ns := range a.listNamespaces(c.Namespaced(), recorded) {
			var listed []runtime.Object
			listed, err = a.listIn(ctx, c, ns, id)
			if err != nil {
				break
			}
			items = append(items, listed...)
		}
		if err == nil {
			return c, items, nil
		}
		if retried || !apierrors.IsNotFound(err) || !a.clients.Rediscover(gk) {
			return nil, nil, err
		}
	}
}

// listIn lists the set's objects that c serves in namespace.
func (a *Applier) listIn(ctx context.Context, c *client.Client, namespace string, id *setIdentity) ([]runtime.Object, error) {
	_, list, err := a.clients.NewObjects(c.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if err := c.List(ctx, namespace, list, metav1.ListOptions{LabelSelector: id.selector()}); err != nil {
		return nil, err
	}
	return meta.ExtractList(list)
}

// confirmNotServed checks with a live discovery read that a kind the
// mapper does not know is really not served: the mapper also answers NoMatch
// for the kinds of a group whose discovery failed, whose objects may well
// exist.
func (a *Applier) confirmNotServed(ctx context.Context, gk schema.GroupKind) error {
	served, err := a.clients.Served(ctx, gk)
	if err != nil {
		return fmt.Errorf("cannot tell whether %s is still served: %w", gk, err)
	}
	if served {
		return fmt.Errorf("%s is served but not mapped yet", gk)
	}
	return nil
}

// listNamespaces says where to list a kind for pruning: cluster-scoped kinds
// once, cluster-wide; namespaced kinds in the namespaces recorded for them,
// or, where the inventory does not know (""), in Options.PruneNamespaces or
// else across all namespaces.
func (a *Applier) listNamespaces(namespaced bool, recorded map[string]bool) []string {
	if !namespaced {
		return []string{metav1.NamespaceAll}
	}
	if recorded[""] || len(recorded) == 0 {
		if len(a.opts.PruneNamespaces) == 0 {
			return []string{metav1.NamespaceAll}
		}
		namespaces := slices.Clone(a.opts.PruneNamespaces)
		for ns := range recorded {
			if ns != "" {
				namespaces = append(namespaces, ns)
			}
		}
		slices.Sort(namespaces)
		return slices.Compact(namespaces)
	}
	return slices.Sorted(maps.Keys(recorded))
}
