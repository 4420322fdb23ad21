package cache_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestCacheInternsStrings shows, on the API server, that an InternStrings
// cache's objects share their equal strings (the default keeps them apart),
// that each object is still, field for field, what the server holds minus
// managedFields, and that resyncs, which hand stored objects to the
// transform again, never write to objects handlers read (run with -race).
func TestCacheInternsStrings(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	for i := range 3 {
		applyPod(t, ns, fmt.Sprintf("pod-%d", i), "same")
	}
	interning := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns, Resync: time.Second},
		Kinds:   map[schema.GroupVersionKind]cache.KindOptions{podGVK: {InternStrings: ptr.To(true)}}})
	plain := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}})
	in, err := interning.ForKind(podGVK)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plain.ForKind(podGVK)
	if err != nil {
		t.Fatal(err)
	}
	// Each resync hands a handler the stored objects, which it reads whole
	// while the next resync's transform walks them.
	var resyncs atomic.Int32
	if _, err := in.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
		sameJSON(t, "a resynced pod read twice", obj, obj)
		resyncs.Add(1)
	}}); err != nil {
		t.Fatal(err)
	}
	startAndSync(t, interning)
	startAndSync(t, plain)

	pods := map[string]*corev1.Pod{}
	for i := range 3 {
		name := fmt.Sprintf("pod-%d", i)
		want, err := kube(t).CoreV1().Pods(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want.ManagedFields = nil
		want.SetGroupVersionKind(podGVK)
		got := get(t, in, ns+"/"+name).(*corev1.Pod)
		got = got.DeepCopy()
		got.SetGroupVersionKind(podGVK)
		sameJSON(t, name+" in the interning cache", got, want)
		pods[name] = get(t, in, ns+"/"+name).(*corev1.Pod)
	}
	image := func(p *corev1.Pod) *byte { return unsafe.StringData(p.Spec.Containers[0].Image) }
	if image(pods["pod-0"]) != image(pods["pod-1"]) || image(pods["pod-1"]) != image(pods["pod-2"]) {
		t.Error("an InternStrings cache's pods do not share their image string")
	}
	p0, p1 := get(t, pl, ns+"/pod-0").(*corev1.Pod), get(t, pl, ns+"/pod-1").(*corev1.Pod)
	if image(p0) == image(p1) {
		t.Error("the default cache's pods share their image string")
	}
	controlplanetest.Eventually(t, time.Minute, "three rounds of resyncs handled", func() bool { return resyncs.Load() >= 9 })
}
