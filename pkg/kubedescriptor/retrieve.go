package kubedescriptor

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	lariatcache "github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Reads: Retrieve lists the managed objects (from the API server or a
// synced informer) and reports each as the value applied while it has not
// drifted.

// retrieve reports the objects of the kind that carry the management
// label and the descriptor applied (see authored): a copy of one is not
// reported, so it is never deleted or updated. An object that still holds what the descriptor applied (see
// actualValue) is reported as the value that was applied, so the scheduler
// compares desired values with desired values; one that drifted is
// reported as the live object, which equals no desired value, so it is
// re-applied. Objects without a desired value are deleted.
func (k *kind) retrieve(ctx context.Context, correlate []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
	objs, err := k.list(ctx)
	if err != nil {
		return nil, err
	}
	desired := correlated(correlate)
	ours := objs[:0]
	var metas []metav1.Object
	var keys []string
	// Keys are gathered to prune verdicts only when there are any: most
	// descriptors judge no object by its managedFields and find no copy.
	var listed map[string]bool
	if k.verdicts.held() {
		listed = make(map[string]bool, len(objs))
	}
	for _, obj := range objs {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		if listed != nil {
			listed[KeyFor(k.gvk, m.GetNamespace(), m.GetName())] = true
		}
		if authored, err := k.authored(ctx, m); err != nil {
			return nil, err
		} else if authored {
			ours = append(ours, obj)
			metas, keys = append(metas, m), append(keys, KeyFor(k.gvk, m.GetNamespace(), m.GetName()))
		}
	}
	if listed != nil {
		k.verdicts.keepOnly(listed)
	}
	k.recordDryRuns(ctx, metas, keys, desired)
	out := make([]kvscheduler.KVWithMetadata, 0, len(ours))
	for i, obj := range ours {
		out = append(out, k.report(ctx, keys[i], obj, desired))
	}
	return out, nil
}

// report is what Retrieve says of the live object at key: the value last
// applied while it has not drifted (see actualValue), else the object.
func (k *kind) report(ctx context.Context, key string, obj runtime.Object, desired map[string]any) kvscheduler.KVWithMetadata {
	obj.GetObjectKind().SetGroupVersionKind(k.gvk)
	var value any = obj
	if want, ok := desired[key]; ok {
		var inSync bool
		value, inSync = k.actualValue(ctx, key, obj, want)
		if inSync && Equivalent(value, want) {
			// The scheduler will find nothing to apply: the server holds
			// what is wanted, at this object's version.
			k.opts.Landings.record(key, obj, k.applied.get(key))
		}
	}
	return kvscheduler.KVWithMetadata{Key: key, Value: value, Metadata: uidOf(obj)}
}

// correlated maps the keys of the values Retrieve is given to those values.
func correlated(correlate []kvscheduler.KVWithMetadata) map[string]any {
	desired := make(map[string]any, len(correlate))
	for _, kv := range correlate {
		desired[kv.Key] = kv.Value
	}
	return desired
}

// syncedStore returns the store of the kind's informer (Options.Cache),
// or an error while it has not synced: an informer that has not synced
// holds part of the objects or none, and read as "this is all there is"
// it would make the scheduler re-create what exists or forget what it
// must delete.
func (k *kind) syncedStore() (toolscache.Store, error) {
	informer, err := k.opts.Cache.ForKind(k.gvk)
	if err != nil {
		return nil, err
	}
	if !informer.HasSynced() {
		return nil, fmt.Errorf("the %s cache has not synced: its objects are not known yet", k.gvk.Kind)
	}
	return informer.GetStore(), nil
}

// manages tells whether m is one of the descriptor's objects: it carries
// the management label and is in Options.Namespace (when set).
func (k *kind) manages(m metav1.Object) bool {
	return m.GetLabels()[LabelManagedBy] == k.opts.FieldManager &&
		(k.opts.Namespace == "" || m.GetNamespace() == "" || m.GetNamespace() == k.opts.Namespace)
}

func (k *kind) list(ctx context.Context) ([]runtime.Object, error) {
	selector := labels.SelectorFromSet(labels.Set{LabelManagedBy: k.opts.FieldManager})
	if k.opts.Cache != nil {
		store, err := k.syncedStore()
		if err != nil {
			return nil, err
		}
		items, err := managedItems(store, selector)
		if err != nil {
			return nil, err
		}
		var out []runtime.Object
		for _, item := range items {
			obj, ok := item.(runtime.Object)
			if !ok {
				continue
			}
			if m, err := meta.Accessor(obj); err != nil || !k.manages(m) {
				continue
			}
			// The store's objects are shared with every reader of the
			// cache and must not be changed.
			out = append(out, obj.DeepCopyObject())
		}
		return out, nil
	}
	c, err := k.opts.Clients.ForKind(k.gvk)
	if err != nil {
		return nil, err
	}
	_, list, err := k.opts.Clients.NewObjects(k.gvk)
	if err != nil {
		return nil, err
	}
	ctx, cancel := k.requestContext(ctx)
	defer cancel()
	ns := k.opts.Namespace
	if !c.Namespaced() {
		ns = ""
	}
	if err := c.List(ctx, ns, list, metav1.ListOptions{LabelSelector: selector.String()}); err != nil {
		return nil, err
	}
	return meta.ExtractList(list)
}

// actualValue is what Retrieve reports for a live object with a desired
// value, and whether the object is in sync: the value last applied while the object's owned fields hold what
// that apply stored, the live object once they do not. Without a record of
// the apply (after a restart, or for an object re-created behind the
// scheduler's back) a server-side dry run of the desired value stands in
// for it, once per object; if even that fails, the schema-less Equivalent
// decides, and the dry run is not repeated (by the next Retrieve or
// comparison) until the live object changes.
func (k *kind) actualValue(ctx context.Context, key string, live runtime.Object, want any) (value any, inSync bool) {
	m, err := meta.Accessor(live)
	if err != nil {
		return live, false
	}
	st := k.applied.get(key)
	if needsDryRun(st, m) {
		st = k.dryRun(ctx, key, m, want)
	}
	if st.noRecordAt != "" {
		if Equivalent(live, want) {
			return want, true
		}
		return live, false
	}
	if st.drifted(live) {
		return live, false
	}
	if st.writtenSince(m) {
		st = k.recheck(ctx, key, st, m, live)
	}
	if st.driftedAt != "" && st.driftedAt == m.GetResourceVersion() {
		return live, false
	}
	return st.value, true
}

// dryRunConcurrency bounds the dry runs one Retrieve sends at once.
const dryRunConcurrency = 8

// recordDryRuns sends together (up to dryRunConcurrency at a time) the
// dry runs that stand in for the apply records of the objects with a
// desired value and no record, which after a restart is every object: one
// after another, in report, they made the first resync after a restart
// take a round trip per object before it could apply anything
// (TestRestartDryRunsGoTogether).
func (k *kind) recordDryRuns(ctx context.Context, metas []metav1.Object, keys []string, desired map[string]any) {
	sem := make(chan struct{}, dryRunConcurrency)
	var wg sync.WaitGroup
	for i, m := range metas {
		key := keys[i]
		want, ok := desired[key]
		if !ok || !needsDryRun(k.applied.get(key), m) {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			// A dry run that panics records nothing: report repeats it on
			// the scheduler's goroutine, whose guard reports the panic as
			// the read's error, as it would without this pass.
			defer func() { _ = recover() }()
			k.dryRun(ctx, key, m, want)
		}()
	}
	wg.Wait()
}

// needsDryRun tells whether st, the record of the apply of live's key, is
// missing or stale: of another object (the same key re-created), or of a
// failed dry run of a version of live that changed since.
func needsDryRun(st *appliedState, live metav1.Object) bool {
	return st == nil || st.uid != live.GetUID() || st.noRecordAt != "" && st.noRecordAt != live.GetResourceVersion()
}

// dryRun records, for live at key, what a server-side dry run of want
// says the descriptor's apply would own, or, if the dry run fails, that
// live at its resourceVersion has no record.
func (k *kind) dryRun(ctx context.Context, key string, live metav1.Object, want any) *appliedState {
	var st *appliedState
	liveObj, _ := live.(runtime.Object) // meta.Accessor returns the object itself
	if result, err := k.patch(ctx, key, want, true); err == nil {
		st = newAppliedState(result, want, k.opts.FieldManager)
		if st != nil && liveObj != nil {
			// The dry run says what an apply would store, owned or not
			// (a Secret's data written from its stringData): the live
			// object holds it or has drifted (see outside.go).
			if sameOutsideMeta(result, liveObj) {
				st.syncedAt = live.GetResourceVersion()
			} else {
				st.driftedAt = live.GetResourceVersion()
			}
		}
	}
	if st == nil || st.uid != live.GetUID() {
		st = &appliedState{uid: live.GetUID(), noRecordAt: live.GetResourceVersion()}
	}
	k.applied.put(key, st)
	return st
}

// managedItems returns the store's objects that may carry the management
// label: only those when the store selects by label itself (a
// SharedCacheFactory's: on a compact cache, List would decode every object
// of the kind, managed or not, and ListSelected compares the labels kept
// beside each encoded object), every object otherwise. Callers still check
// each object with manages.
func managedItems(store toolscache.Store, selector labels.Selector) ([]any, error) {
	if s, ok := store.(lariatcache.SelectingIndexer); ok {
		return s.ListSelected("", selector)
	}
	return store.List(), nil
}
