package cache_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

var podGVK = corev1.SchemeGroupVersion.WithKind("Pod")

// applyPod writes a Pod with most of what real ones carry (labels,
// annotations, owner, containers with env, probes, resources and mounts,
// volumes, tolerations, status) from two field managers, so every part of
// it must survive the compact cache's encoding.
func applyPod(t testing.TB, ns, name, note string) {
	t.Helper()
	spec := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":%q,
 "labels":{"app":"shop","tier":"api"},"annotations":{"note":%q,"sidecar.istio.io/status":"{\"containers\":[\"istio-proxy\"]}"},
 "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"shop-1","uid":"6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b","controller":true}]},
 "spec":{"nodeName":"node-1","terminationGracePeriodSeconds":30,"securityContext":{"runAsUser":1000,"fsGroup":2000},
  "containers":[{"name":"api","image":"registry.example.com/api:v1","args":["--port=8080"],
   "env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"configMapKeyRef":{"name":"cfg","key":"b"}}}],
   "ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],
   "resources":{"requests":{"cpu":"250m","memory":"256Mi"},"limits":{"cpu":"1","memory":"512Mi"}},
   "readinessProbe":{"httpGet":{"path":"/ready","port":8080},"periodSeconds":10},
   "volumeMounts":[{"name":"cfg","mountPath":"/etc/cfg","readOnly":true}]}],
  "volumes":[{"name":"cfg","configMap":{"name":"cfg","defaultMode":420}}],
  "tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]}}`,
		name, ns, note)
	status := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"namespace":%q},
 "status":{"phase":"Running","podIP":"10.1.2.3","podIPs":[{"ip":"10.1.2.3"}],"startTime":"2026-11-20T10:00:00Z",
  "conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-20T10:00:00Z"}],
  "containerStatuses":[{"name":"api","ready":true,"restartCount":2,"image":"registry.example.com/api:v1","imageID":"",
   "state":{"running":{"startedAt":"2026-11-20T10:00:00Z"}}}]}}`, name, ns)
	pods := kube(t).CoreV1().Pods(ns)
	force := true
	if _, err := pods.Patch(t.Context(), name, types.ApplyPatchType, []byte(spec), metav1.PatchOptions{FieldManager: "spec", Force: &force}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Patch(t.Context(), name, types.ApplyPatchType, []byte(status), metav1.PatchOptions{FieldManager: "kubelet", Force: &force}, "status"); err != nil {
		t.Fatal(err)
	}
}

// eventLog records what a handler of a compact informer is given.
type eventLog struct {
	mu      sync.Mutex
	adds    map[string]runtime.Object
	updates map[string][]runtime.Object   // old, new of the last change (not resync)
	changes map[string][][]runtime.Object // old, new of every change, in order
	resyncs int                           // updates with an unchanged resourceVersion
	deletes map[string]any                // a tombstone's object for a delete missed
	bad     []string                      // objects that were not of the informer's kind
}

func newEventLog() *eventLog {
	return &eventLog{adds: map[string]runtime.Object{}, updates: map[string][]runtime.Object{}, changes: map[string][][]runtime.Object{}, deletes: map[string]any{}}
}

func (l *eventLog) handler(want runtime.Object) toolscache.ResourceEventHandler {
	check := func(obj any) (runtime.Object, string) {
		o, ok := obj.(runtime.Object)
		if !ok || fmt.Sprintf("%T", o) != fmt.Sprintf("%T", want) {
			l.bad = append(l.bad, fmt.Sprintf("%T", obj))
			return nil, ""
		}
		key, _ := toolscache.MetaNamespaceKeyFunc(o)
		return o, key
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			l.mu.Lock()
			defer l.mu.Unlock()
			if o, key := check(obj); o != nil {
				l.adds[key] = o
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			l.mu.Lock()
			defer l.mu.Unlock()
			o, _ := check(oldObj)
			n, key := check(newObj)
			if o == nil || n == nil {
				return
			}
			// A resync (same resourceVersion) is counted, not kept: it
			// would hide the last change's old object from the checks.
			if resourceVersionOf(o) == resourceVersionOf(n) {
				l.resyncs++
				return
			}
			l.updates[key] = []runtime.Object{o, n}
			l.changes[key] = append(l.changes[key], []runtime.Object{o, n})
		},
		DeleteFunc: func(obj any) {
			l.mu.Lock()
			defer l.mu.Unlock()
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj // a delete missed while not watching
			}
			if o, key := check(obj); o != nil {
				l.deletes[key] = o
			}
		},
	}
}

func resourceVersionOf(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("(no metadata: %v)", err)
	}
	return m.GetResourceVersion()
}

// sameJSON fails the test unless a and b encode to the same JSON: every
// field, not only those a comparison of chosen fields would look at.
func sameJSON(t *testing.T, what string, a, b any) {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(ja) != string(jb) {
		t.Errorf("%s differs:\n got  %s\n want %s", what, ja, jb)
	}
}

// informers is a compact informer of one kind and, for reference, the
// informer Lariat's default cache has for the same kind.
type informers struct {
	compact, plain               toolscache.SharedIndexInformer
	compactFactory, plainFactory *cache.SharedCacheFactory
}

// compactAndPlain makes the two informers, over namespace ns only (other
// tests' objects stay out); the compact one keeps only one object decoded,
// so that reads decode.
func compactAndPlain(t *testing.T, ns string, gvk schema.GroupVersionKind, resync time.Duration) informers {
	t.Helper()
	var in informers
	in.compactFactory = newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns, Resync: resync},
		Kinds:   map[schema.GroupVersionKind]cache.KindOptions{gvk: {Compact: ptr.To(true), HotObjects: ptr.To(1)}},
	})
	in.plainFactory = newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}})
	var err error
	if in.compact, err = in.compactFactory.ForKind(gvk); err != nil {
		t.Fatal(err)
	}
	if in.plain, err = in.plainFactory.ForKind(gvk); err != nil {
		t.Fatal(err)
	}
	return in
}

func (in informers) start(t *testing.T) {
	t.Helper()
	startAndSync(t, in.compactFactory)
	startAndSync(t, in.plainFactory)
}

func get(t *testing.T, informer toolscache.SharedIndexInformer, key string) runtime.Object {
	t.Helper()
	obj, ok, err := informer.GetStore().GetByKey(key)
	if err != nil || !ok {
		t.Fatalf("%s not in cache (err %v)", key, err)
	}
	return obj.(runtime.Object)
}

// sameAsPlain fails the test unless the compact informer's object for key
// is the plain informer's, once both have the same version.
func (in informers) sameAsPlain(t *testing.T, key string) runtime.Object {
	t.Helper()
	controlplanetest.Eventually(t, time.Minute, key+" at the same version in both caches", func() bool {
		return resourceVersionOf(get(t, in.compact, key)) == resourceVersionOf(get(t, in.plain, key))
	})
	got := get(t, in.compact, key)
	sameJSON(t, key+" read from the compact cache", got, get(t, in.plain, key))
	return got
}

// TestCompactCacheGivesWholeObjects shows that a compact cache never costs
// data: what its store, its indexers and its handlers are given is, field
// for field, what Lariat's default cache holds (the object without
// managedFields), through adds, updates, reads of objects no longer
// decoded, resyncs and deletes. Pods are encoded with protobuf.
func TestCompactCacheGivesWholeObjects(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	for i := range 3 {
		applyPod(t, ns, fmt.Sprintf("pod-%d", i), "first")
	}
	in := compactAndPlain(t, ns, podGVK, 300*time.Millisecond)
	var transformed []string
	var transformMu sync.Mutex
	err := in.compact.SetTransform(func(obj any) (any, error) {
		// A user's transform is given the kind, never the stored form,
		// also when client-go hands stored objects back on resync.
		transformMu.Lock()
		defer transformMu.Unlock()
		transformed = append(transformed, fmt.Sprintf("%T", obj))
		return cache.StripMetadata(obj)
	})
	if err != nil {
		t.Fatal(err)
	}
	byNode := func(obj any) ([]string, error) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return nil, fmt.Errorf("indexer given a %T", obj)
		}
		return []string{pod.Spec.NodeName}, nil
	}
	if err := in.compact.AddIndexers(toolscache.Indexers{"node": byNode}); err != nil {
		t.Fatal(err)
	}
	log, plainLog := newEventLog(), newEventLog()
	if _, err := in.compact.AddEventHandler(log.handler(&corev1.Pod{})); err != nil {
		t.Fatal(err)
	}
	if _, err := in.plain.AddEventHandler(plainLog.handler(&corev1.Pod{})); err != nil {
		t.Fatal(err)
	}
	in.start(t)

	// Every object, read again after the others (decoded anew: one is kept).
	for range 2 {
		for i := range 3 {
			in.sameAsPlain(t, fmt.Sprintf("%s/pod-%d", ns, i))
		}
	}
	first := in.sameAsPlain(t, ns+"/pod-0").(*corev1.Pod)
	if len(first.Spec.Containers) != 1 || first.Spec.Containers[0].Resources.Limits.Memory().String() != "512Mi" ||
		first.Status.ContainerStatuses[0].RestartCount != 2 || first.Annotations["note"] != "first" || len(first.ManagedFields) != 0 {
		t.Errorf("the compact cache's pod lacks what was written: %+v", first)
	}
	list := in.compact.GetStore().List()
	if len(list) != 3 {
		t.Fatalf("List gave %d objects, want 3", len(list))
	}
	for _, obj := range list {
		key, _ := toolscache.MetaNamespaceKeyFunc(obj)
		sameJSON(t, key+" listed", obj, get(t, in.plain, key))
	}
	onNode, err := in.compact.GetIndexer().ByIndex("node", "node-1")
	if err != nil || len(onNode) != 3 {
		t.Fatalf("ByIndex(node-1) = %d objects, %v; want 3", len(onNode), err)
	}
	log.mu.Lock()
	for key, obj := range log.adds {
		sameJSON(t, key+" given to OnAdd", obj, get(t, in.plain, key))
	}
	log.mu.Unlock()

	// An update: the handler gets the old and the new object whole.
	applyPod(t, ns, "pod-1", "second")
	key := ns + "/pod-1"
	updated := in.sameAsPlain(t, key).(*corev1.Pod)
	if updated.Annotations["note"] != "second" {
		t.Fatalf("the compact cache has note %q after the update, want second", updated.Annotations["note"])
	}
	controlplanetest.Eventually(t, time.Minute, "the update handed to the handler", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		u := log.updates[key]
		return u != nil && resourceVersionOf(u[1]) == updated.ResourceVersion
	})
	log.mu.Lock()
	u := log.updates[key]
	changes := log.changes[key]
	log.mu.Unlock()
	sameJSON(t, "the update's new object", u[1], updated)
	// The change that brought note "second" hands the version before it
	// as old, whole; a later write to the pod (one was seen on a busy
	// machine) may follow it, so it is looked for among all changes.
	found := false
	for _, c := range changes {
		old, cur := c[0].(*corev1.Pod), c[1].(*corev1.Pod)
		if cur.Annotations["note"] == "second" && old.Annotations["note"] == "first" && old.Spec.NodeName == "node-1" {
			found = true
		}
	}
	if !found {
		t.Errorf("no update handed the previous version (note first) as old with note second as new: %d changes, last old %+v", len(changes), u[0])
	}

	// Resyncs hand every object again, whole.
	controlplanetest.Eventually(t, time.Minute, "a resync", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return log.resyncs >= 3
	})

	// A delete hands the last version, whole (at once: no kubelet here
	// would confirm a graceful one).
	err = kube(t).CoreV1().Pods(ns).Delete(t.Context(), "pod-1", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []*eventLog{log, plainLog} {
		controlplanetest.Eventually(t, time.Minute, "the delete handed to the handler", func() bool {
			l.mu.Lock()
			defer l.mu.Unlock()
			return l.deletes[key] != nil
		})
	}
	plainLog.mu.Lock()
	log.mu.Lock()
	sameJSON(t, "the deleted object", log.deletes[key], plainLog.deletes[key])
	plainLog.mu.Unlock()
	bad := log.bad
	log.mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("the handler was given objects of other types: %v", bad)
	}
	if _, ok, _ := in.compact.GetStore().GetByKey(key); ok {
		t.Errorf("%s is still in the compact cache after its delete", key)
	}
	transformMu.Lock()
	defer transformMu.Unlock()
	for _, typ := range transformed {
		if typ != "*v1.Pod" {
			t.Errorf("the transform was given a %s", typ)
		}
	}
}

// TestCompactCacheOfCustomResources: kinds without protobuf (custom
// resources, read as unstructured objects) are stored as JSON, and read
// back whole.
func TestCompactCacheOfCustomResources(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	widgets := dynamic.NewForConfigOrDie(cp.Config()).Resource(testkinds.WidgetGVR).Namespace(ns)
	for i := range 2 {
		w := testkinds.Widget(ns, fmt.Sprintf("w-%d", i), int64(i+7))
		w.SetLabels(map[string]string{"size": fmt.Sprint(i + 7)})
		if _, err := widgets.Create(t.Context(), w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	in := compactAndPlain(t, ns, testkinds.WidgetGVK, 0)
	log := newEventLog()
	if _, err := in.compact.AddEventHandler(log.handler(&unstructured.Unstructured{})); err != nil {
		t.Fatal(err)
	}
	in.start(t)
	for range 2 {
		for i := range 2 {
			w := in.sameAsPlain(t, fmt.Sprintf("%s/w-%d", ns, i)).(*unstructured.Unstructured)
			if size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size"); size != int64(i+7) || w.GetKind() != "Widget" {
				t.Errorf("w-%d read from the compact cache: %v", i, w.Object)
			}
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.adds) != 2 || len(log.bad) > 0 {
		t.Errorf("handler given %d adds and objects of other types %v", len(log.adds), log.bad)
	}
	for key, obj := range log.adds {
		sameJSON(t, key+" given to OnAdd", obj, get(t, in.plain, key))
	}
}

// TestCompactCacheAcrossRestart: a compact factory started again after its
// context ended rebuilds its informer from the objects it held (encoded),
// and its handlers get the changes made while it was stopped whole: an
// update as old and new object, a delete as the last object held.
func TestCompactCacheAcrossRestart(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	for i := range 3 {
		applyPod(t, ns, fmt.Sprintf("pod-%d", i), "first")
	}
	in := compactAndPlain(t, ns, podGVK, 0)
	log := newEventLog()
	if _, err := in.compact.AddEventHandler(log.handler(&corev1.Pod{})); err != nil {
		t.Fatal(err)
	}
	stop := startSynced(t, in.compactFactory)
	startAndSync(t, in.plainFactory)
	before := in.sameAsPlain(t, ns+"/pod-2")

	stop()
	controlplanetest.Eventually(t, time.Minute, "the compact informer to stop", in.compact.IsStopped)
	applyPod(t, ns, "pod-1", "while stopped")
	err := kube(t).CoreV1().Pods(ns).Delete(t.Context(), "pod-2", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
	if err != nil {
		t.Fatal(err)
	}
	startSynced(t, in.compactFactory)

	updated := in.sameAsPlain(t, ns+"/pod-1").(*corev1.Pod)
	if updated.Annotations["note"] != "while stopped" {
		t.Fatalf("after the restart the compact cache has note %q, want the update made while stopped", updated.Annotations["note"])
	}
	controlplanetest.Eventually(t, time.Minute, "the update and the delete handed to the handler", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		u := log.updates[ns+"/pod-1"]
		return u != nil && resourceVersionOf(u[1]) == updated.ResourceVersion && log.deletes[ns+"/pod-2"] != nil
	})
	log.mu.Lock()
	defer log.mu.Unlock()
	sameJSON(t, "the update's new object", log.updates[ns+"/pod-1"][1], updated)
	if old := log.updates[ns+"/pod-1"][0].(*corev1.Pod); old.Annotations["note"] != "first" || len(old.Spec.Containers) != 1 {
		t.Errorf("the update's old object is not the version held before the restart: %+v", old)
	}
	// The delete happened while stopped: the handler gets the last
	// version the cache held, whole (a tombstone carries it).
	sameJSON(t, "the object deleted while stopped", log.deletes[ns+"/pod-2"], before)
	if len(log.bad) > 0 {
		t.Errorf("the handler was given objects of other types: %v", log.bad)
	}
}
