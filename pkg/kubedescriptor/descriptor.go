package kubedescriptor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

const (
	// LabelManagedBy marks the objects a descriptor manages; its value is
	// the field manager. Retrieve lists by it, so only objects the
	// descriptor wrote are ever reported to (and deleted by) the scheduler.
	LabelManagedBy = "lariat.dev/managed-by"
	// AnnotationDependsOn lists, comma separated, the keys of the values
	// an object depends on.
	AnnotationDependsOn = "lariat.dev/depends-on"
	// DefaultTimeout bounds each request when Options.Timeout is zero: a
	// request the server never answers would otherwise stall the
	// scheduler's only goroutine until the callback's context ends, which
	// for work no caller waits for (retries, NonBlocking transactions) is
	// only when the scheduler closes.
	DefaultTimeout = 30 * time.Second
)

// Options configure a descriptor.
type Options struct {
	// Clients talks to the API server; required.
	Clients *client.SharedClientFactory
	// Cache, when set, serves Retrieve from the kind's informer instead of
	// a List request. The caller starts the factory (Start) and waits for
	// its sync after New has created the informer; until the informer has
	// synced, Retrieve fails (the scheduler then applies none of the
	// kind's operations). A cache that lags behind makes a resync see an
	// older state, which the next resync corrects.
	Cache *cache.SharedCacheFactory
	// FieldManager owns the applied fields and is the value of
	// LabelManagedBy; required, and must be a valid label value. Two
	// schedulers must not share one for the same objects (kind and
	// Namespace): each would delete the other's objects on resync.
	FieldManager string
	// Namespace limits Retrieve of a namespaced kind to one namespace;
	// empty means all. Values in other namespaces can still be applied
	// but are not retrieved. Cluster-scoped kinds ignore it.
	Namespace string
	// Timeout bounds each request; zero or less means DefaultTimeout.
	// Requests also end with the context of the callback that makes them
	// (Create, Update, Delete, Retrieve, RetrieveKeys): the Commit's, so
	// that a caller who gives up ends the request in flight, or the
	// scheduler's lifetime context.
	Timeout time.Duration
	// Context bounds the only requests made outside those callbacks,
	// which get no context: the server-side dry runs of the value
	// comparator (for an object applied before a restart, once per
	// object) and, with RecreateOnImmutable, of UpdateWithRecreate. Pass
	// the scheduler's Context(), so that Close ends such a request instead
	// of waiting for it (up to Timeout). Nil means they are bounded by
	// Timeout alone.
	Context context.Context
	// RecreateOnImmutable makes a change the server rejects because it
	// touches an immutable field (a Deployment's selector, the data of an
	// immutable ConfigMap) a delete and create instead of a failed update.
	// Every change then costs a server-side dry-run apply first, which is
	// why it is off by default.
	RecreateOnImmutable bool
	// PropagationPolicy is how deletes treat the object's dependents; nil
	// means background, so a Job's pods or a Deployment's ReplicaSets go
	// with it (some kinds, such as batch/v1 Jobs, would otherwise orphan
	// them).
	PropagationPolicy *metav1.DeletionPropagation
	// Adopt lets a value take over an existing object that this field
	// manager did not create (no LabelManagedBy of its own). Without it,
	// such a value fails with a *NotManagedError and the object is left
	// as it is: a forced apply would silently take over fields another
	// owner set.
	Adopt bool
}

// NotManagedError is the failure of a value whose object exists but was
// not created by the descriptor's field manager (and Options.Adopt is off).
type NotManagedError struct {
	// Key is the value's key; ManagedBy the object's LabelManagedBy
	// ("" when absent) and FieldManager the descriptor's.
	Key, ManagedBy, FieldManager string
}

// Error says whose the object is.
func (e *NotManagedError) Error() string {
	by := "nobody's label"
	if e.ManagedBy != "" {
		by = "the label of " + e.ManagedBy
	}
	return fmt.Sprintf("kubedescriptor: %s exists and is not managed by %s (it carries %s); "+
		"delete it, label it %s=%s, or set Options.Adopt to take it over", e.Key, e.FieldManager, by, LabelManagedBy, e.FieldManager)
}

// kind is the state of one descriptor.
type kind struct {
	gvk     schema.GroupVersionKind
	opts    Options
	applied appliedStates
}

// New returns the descriptor for the objects of kind gvk. It is named
// "kube:<group>/<kind>" and claims the keys with KeyPrefix(gvk); values may
// be of any version of the kind, and Retrieve reads them in gvk's version.
// New makes no request, except that with a Cache it creates the kind's
// informer.
func New(gvk schema.GroupVersionKind, opts Options) (*kvscheduler.Descriptor, error) {
	if opts.Clients == nil {
		return nil, errors.New("kubedescriptor: Options.Clients is required")
	}
	if opts.FieldManager == "" {
		return nil, errors.New("kubedescriptor: Options.FieldManager is required")
	}
	if errs := validation.IsValidLabelValue(opts.FieldManager); len(errs) > 0 {
		return nil, fmt.Errorf("kubedescriptor: field manager %q is not a label value: %s", opts.FieldManager, strings.Join(errs, "; "))
	}
	if gvk.Kind == "" || gvk.Version == "" {
		return nil, fmt.Errorf("kubedescriptor: kind %s needs a version and a kind", gvk)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Cache != nil {
		// Created now so that the caller's Start runs it.
		if _, err := opts.Cache.ForKind(gvk); err != nil {
			return nil, fmt.Errorf("kubedescriptor: %w", err)
		}
	}
	k := &kind{gvk: gvk, opts: opts}
	prefix := KeyPrefix(gvk.GroupKind())
	var recreate func(key string, _, value any, _ any) bool
	if opts.RecreateOnImmutable {
		recreate = func(key string, _, value any, _ any) bool {
			_, err := k.patch(k.noCallbackContext(), key, value, true)
			return apierrors.IsInvalid(err) && strings.Contains(err.Error(), "immutable")
		}
	}
	return &kvscheduler.Descriptor{
		UpdateWithRecreate: recreate,
		Name:               "kube:" + strings.TrimSuffix(prefix, "/"),
		NBKeyPrefix:        prefix,
		KeySelector:        func(key string) bool { return strings.HasPrefix(key, prefix) },
		ValueComparator:    k.equal,
		Validate:           k.validate,
		Create:             k.create,
		Update: func(ctx context.Context, key string, _, value any, _ any) (any, error) {
			return k.apply(ctx, key, value)
		},
		Delete:             k.delete,
		Retrieve:           k.retrieve,
		RetrieveKeys:       k.retrieveKeys,
		Dependencies:       func(_ string, value any) []kvscheduler.Dependency { return dependencies(value) },
		IsRetriableFailure: retriable,
	}, nil
}

// ForObject returns the descriptor for obj's kind (see New).
func ForObject(obj runtime.Object, opts Options) (*kvscheduler.Descriptor, error) {
	if opts.Clients == nil {
		return nil, errors.New("kubedescriptor: Options.Clients is required")
	}
	gvk, err := opts.Clients.GVKForObject(obj)
	if err != nil {
		return nil, fmt.Errorf("kubedescriptor: %w", err)
	}
	return New(gvk, opts)
}

// DependsOn adds keys to obj's AnnotationDependsOn annotation, keeping the
// ones already listed, and returns obj for chaining.
func DependsOn[T metav1.Object](obj T, keys ...string) T {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	have := splitKeys(a[AnnotationDependsOn])
	for _, k := range keys {
		if k = strings.TrimSpace(k); k != "" && !contains(have, k) {
			have = append(have, k)
		}
	}
	a[AnnotationDependsOn] = strings.Join(have, ",")
	obj.SetAnnotations(a)
	return obj
}

// isNil catches typed nil pointers, whose accessors would panic.
func isNil(v any) bool {
	r := reflect.ValueOf(v)
	return !r.IsValid() || r.Kind() == reflect.Pointer && r.IsNil()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func splitKeys(s string) []string {
	var out []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// dependencies reads the annotation; the key itself is the label, so a
// PENDING status names the missing object's key.
func dependencies(value any) []kvscheduler.Dependency {
	if isNil(value) {
		return nil
	}
	m, err := meta.Accessor(value)
	if err != nil {
		return nil
	}
	var out []kvscheduler.Dependency
	for _, k := range splitKeys(m.GetAnnotations()[AnnotationDependsOn]) {
		out = append(out, kvscheduler.Dependency{Key: k})
	}
	return out
}

// validate only checks what needs no request, because a failed request
// would make the value INVALID instead of retried; the scope is checked
// when the object is applied.
func (k *kind) validate(key string, value any) error {
	obj, ok := value.(runtime.Object)
	if !ok || isNil(value) {
		return kvscheduler.NewInvalidValueError(fmt.Errorf("value of %s is %T, not a runtime.Object", key, value))
	}
	gvk, err := k.opts.Clients.GVKForObject(obj)
	if err != nil {
		return kvscheduler.NewInvalidValueError(err, "apiVersion", "kind")
	}
	if gvk.GroupKind() != k.gvk.GroupKind() {
		return kvscheduler.NewInvalidValueError(fmt.Errorf("value of %s is a %s, want %s", key, gvk.GroupKind(), k.gvk.GroupKind()), "apiVersion", "kind")
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return kvscheduler.NewInvalidValueError(err)
	}
	if m.GetName() == "" {
		return kvscheduler.NewInvalidValueError(errors.New("the object has no name"), "metadata.name")
	}
	if want := KeyFor(gvk, m.GetNamespace(), m.GetName()); want != key {
		return kvscheduler.NewInvalidValueError(fmt.Errorf("the object's key is %s, not %s", want, key), "metadata.name", "metadata.namespace")
	}
	// Dependency keys are not checked against ParseKey: an object may
	// depend on values of other descriptors (an operator's own markers,
	// say), and a mistyped key shows up as an unmet dependency.
	return nil
}

// retriable gives up on requests the server rejected as wrong: repeating
// them cannot succeed until the value changes.
func retriable(err error) bool {
	return !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) && !apierrors.IsForbidden(err)
}

// requestContext bounds one request made under ctx by Timeout.
func (k *kind) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, k.opts.Timeout)
}

// noCallbackContext is the context of requests made outside the
// callbacks that get one (see Options.Context).
func (k *kind) noCallbackContext() context.Context {
	if k.opts.Context != nil {
		return k.opts.Context
	}
	return context.Background()
}

// create applies a value the scheduler believes does not exist. An object
// of that name that this field manager did not create is not taken over
// (unless Options.Adopt): the cache cannot tell, since it holds only
// managed objects, so the server is asked.
func (k *kind) create(ctx context.Context, key string, value any) (any, error) {
	if !k.opts.Adopt {
		live, err := k.getLive(ctx, key)
		if err != nil {
			return nil, err
		}
		if live != nil {
			if by := live.GetLabels()[LabelManagedBy]; by != k.opts.FieldManager {
				return nil, &NotManagedError{Key: key, ManagedBy: by, FieldManager: k.opts.FieldManager}
			}
		}
	}
	return k.apply(ctx, key, value)
}

// getLive reads the object at key from the API server; nil when there is
// none.
func (k *kind) getLive(ctx context.Context, key string) (metav1.Object, error) {
	ref, err := ParseKey(key)
	if err != nil {
		return nil, err
	}
	c, err := k.opts.Clients.ForKind(k.gvk)
	if err != nil {
		return nil, err
	}
	live, _, err := k.opts.Clients.NewObjects(k.gvk)
	if err != nil {
		return nil, err
	}
	ctx, cancel := k.requestContext(ctx)
	defer cancel()
	if err := c.Get(ctx, ref.Namespace, ref.Name, live, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return meta.Accessor(live)
}

// apply applies value and remembers what the server made of it, for drift
// (see appliedState). Its metadata is the object's UID, which deletes use
// as a precondition.
func (k *kind) apply(ctx context.Context, key string, value any) (any, error) {
	result, err := k.patch(ctx, key, value, false)
	if err != nil {
		return nil, err
	}
	k.applied.put(key, newAppliedState(result, value, k.opts.FieldManager))
	return uidOf(result), nil
}

// patch server-side applies value with the descriptor's field manager,
// forcing ownership of the fields it sets, as pkg/apply does; dryRun only
// asks the server what the apply would store. It returns the object the
// server stored (or would store).
func (k *kind) patch(ctx context.Context, key string, value any, dryRun bool) (runtime.Object, error) {
	obj, ok := value.(runtime.Object)
	if !ok || isNil(value) {
		return nil, fmt.Errorf("kubedescriptor: value of %s is %T", key, value)
	}
	gvk, err := k.opts.Clients.GVKForObject(obj)
	if err != nil {
		return nil, err
	}
	c, err := k.opts.Clients.ForKind(gvk)
	if err != nil {
		return nil, err
	}
	u, err := k.applyBody(obj, gvk)
	if err != nil {
		return nil, err
	}
	switch {
	case c.Namespaced() && u.GetNamespace() == "":
		return nil, fmt.Errorf("kubedescriptor: %s is namespaced but %s has no namespace", gvk.Kind, key)
	case !c.Namespaced() && u.GetNamespace() != "":
		return nil, fmt.Errorf("kubedescriptor: %s is cluster-scoped but %s has a namespace", gvk.Kind, key)
	}
	body, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	result, _, err := k.opts.Clients.NewObjects(gvk)
	if err != nil {
		return nil, err
	}
	ctx, cancel := k.requestContext(ctx)
	defer cancel()
	force := true
	opts := metav1.PatchOptions{FieldManager: k.opts.FieldManager, Force: &force}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if err := c.Patch(ctx, u.GetNamespace(), u.GetName(), types.ApplyPatchType, body, result, opts); err != nil {
		return nil, err
	}
	return result, nil
}

// applyBody is what patch sends for obj: the object without what the
// server maintains, with the management label.
func (k *kind) applyBody(obj runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	u, err := toUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u.SetGroupVersionKind(gvk)
	lbls := u.GetLabels()
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[LabelManagedBy] = k.opts.FieldManager
	u.SetLabels(lbls)
	return u, nil
}

// equal is the descriptor's value comparator. A live object (one with a
// resourceVersion, as Retrieve reports it) equals a desired value when it
// has not drifted from what applying that value stores (actualValue) and
// that value is the desired one; two desired values are compared with
// Equivalent.
func (k *kind) equal(key string, a, b any) bool {
	switch la, lb := isLive(a), isLive(b); {
	case la && !lb:
		v, inSync := k.actualValue(k.noCallbackContext(), key, a.(runtime.Object), b)
		return inSync && Equivalent(v, b)
	case lb && !la:
		v, inSync := k.actualValue(k.noCallbackContext(), key, b.(runtime.Object), a)
		return inSync && Equivalent(a, v)
	}
	return Equivalent(a, b)
}

func isLive(v any) bool {
	if _, ok := v.(runtime.Object); !ok || isNil(v) {
		return false
	}
	m, err := meta.Accessor(v)
	return err == nil && m.GetResourceVersion() != ""
}

// uidOf returns obj's UID, or nil when it has none.
func uidOf(obj runtime.Object) any {
	if m, err := meta.Accessor(obj); err == nil && m.GetUID() != "" {
		return m.GetUID()
	}
	return nil
}

// delete deletes the object the scheduler knows, with its dependents in
// the background (or Options.PropagationPolicy). The delete is conditional
// on the UID the object had when it was applied or retrieved: an object
// replaced since, under the same name, is someone else's and stays. An
// object already gone is what was wanted.
func (k *kind) delete(ctx context.Context, key string, _ any, md any) error {
	ref, err := ParseKey(key)
	if err != nil {
		return err
	}
	c, err := k.opts.Clients.ForKind(k.gvk)
	if err != nil {
		return err
	}
	uid, _ := md.(types.UID)
	if uid == "" {
		// Known without a UID (restored by a revert, say): read it, and
		// leave alone an object that is not this manager's.
		live, err := k.getLive(ctx, key)
		if err != nil || live == nil || live.GetLabels()[LabelManagedBy] != k.opts.FieldManager {
			return err
		}
		uid = live.GetUID()
	}
	policy := metav1.DeletePropagationBackground
	if k.opts.PropagationPolicy != nil {
		policy = *k.opts.PropagationPolicy
	}
	ctx, cancel := k.requestContext(ctx)
	defer cancel()
	err = c.Delete(ctx, ref.Namespace, ref.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &policy})
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		// Gone, or replaced by another object of the same name: either
		// way the one this value stood for no longer exists.
		k.applied.put(key, nil)
		return nil
	}
	return err
}

// retrieve reports the objects of the kind that carry the management
// label. An object that still holds what the descriptor applied (see
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
	out := make([]kvscheduler.KVWithMetadata, 0, len(objs))
	for _, obj := range objs {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		out = append(out, k.report(ctx, KeyFor(k.gvk, m.GetNamespace(), m.GetName()), obj, desired))
	}
	return out, nil
}

// report is what Retrieve says of the live object at key: the value last
// applied while it has not drifted (see actualValue), else the object.
func (k *kind) report(ctx context.Context, key string, obj runtime.Object, desired map[string]any) kvscheduler.KVWithMetadata {
	obj.GetObjectKind().SetGroupVersionKind(k.gvk)
	var value any = obj
	if want, ok := desired[key]; ok {
		value, _ = k.actualValue(ctx, key, obj, want)
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
		var out []runtime.Object
		for _, item := range store.List() {
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
	uid, rv := m.GetUID(), m.GetResourceVersion()
	st := k.applied.get(key)
	if st == nil || st.uid != uid || st.noRecordAt != "" && st.noRecordAt != rv {
		st = nil
		if result, err := k.patch(ctx, key, want, true); err == nil {
			st = newAppliedState(result, want, k.opts.FieldManager)
		}
		if st == nil || st.uid != uid {
			st = &appliedState{uid: uid, noRecordAt: rv}
		}
		k.applied.put(key, st)
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
	return st.value, true
}

// toUnstructured converts obj into an apply body. Typed objects carry zero
// values (creationTimestamp, an empty status) the apply would otherwise
// claim ownership of; the server-maintained metadata must not be sent.
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	var u *unstructured.Unstructured
	if x, ok := obj.(*unstructured.Unstructured); ok {
		u = x.DeepCopy()
	} else {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		u = &unstructured.Unstructured{Object: m}
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	for _, f := range []string{"resourceVersion", "managedFields", "uid", "generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	return u, nil
}
