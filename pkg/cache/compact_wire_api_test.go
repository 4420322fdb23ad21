package cache_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestCompactCacheReadsPodsFromTheWire shows that a compact cache of a
// protobuf kind keeps its objects from the wire bytes (no decode and encode
// again when they arrive) and still holds, field for field, what the
// default cache holds: through the initial list, an update and a delete.
func TestCompactCacheReadsPodsFromTheWire(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	for i := range 3 {
		applyPod(t, ns, fmt.Sprintf("pod-%d", i), "first")
	}
	in := compactAndPlain(t, ns, podGVK, 0)
	in.start(t)
	for i := range 3 {
		pod := in.sameAsPlain(t, fmt.Sprintf("%s/pod-%d", ns, i)).(*corev1.Pod)
		if pod.ManagedFields != nil || pod.Labels["app"] != "shop" || len(pod.OwnerReferences) != 1 || len(pod.Spec.Containers) != 1 {
			t.Fatalf("pod-%d read from the compact cache: %+v", i, pod.ObjectMeta)
		}
	}
	applyPod(t, ns, "pod-1", "second")
	updated := in.sameAsPlain(t, ns+"/pod-1").(*corev1.Pod)
	if updated.Annotations["note"] != "second" {
		t.Fatalf("updated pod-1 has note %q", updated.Annotations["note"])
	}
	if err := kube(t).CoreV1().Pods(ns).Delete(t.Context(), "pod-2", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "pod-2 gone from the compact cache", func() bool {
		_, ok, _ := in.compact.GetStore().GetByKey(ns + "/pod-2")
		return !ok
	})
	t.Logf("%d objects read from the wire", cache.WiredObjects(in.compact))
	// The three of the watch-list's initial events, the update and the delete.
	if n := cache.WiredObjects(in.compact); n < 5 {
		t.Fatalf("%d objects read from the wire, want at least 5", n)
	}
}

// TestCompactCacheWithATransformDecodesFromTheWire shows that a transform
// set on a compact informer of a protobuf kind is given whole Pods, as
// without compaction (managedFields included: SetTransform replaces the
// strip), and no object is kept from the wire bytes.
func TestCompactCacheWithATransformDecodesFromTheWire(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	applyPod(t, ns, "pod-0", "first")
	in := compactAndPlain(t, ns, podGVK, 0)
	var seen, withManagedFields atomic.Int64
	err := in.compact.SetTransform(func(obj any) (any, error) {
		if p, ok := obj.(*corev1.Pod); ok {
			seen.Add(1)
			if len(p.ManagedFields) > 0 {
				withManagedFields.Add(1)
			}
		}
		return obj, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	in.start(t)
	applyPod(t, ns, "pod-0", "second")
	controlplanetest.Eventually(t, time.Minute, "the update given to the transform", func() bool {
		return seen.Load() >= 2
	})
	if seen.Load() != withManagedFields.Load() {
		t.Fatalf("%d Pods given to the transform, %d with managedFields", seen.Load(), withManagedFields.Load())
	}
	if n := cache.WiredObjects(in.compact); n != 0 {
		t.Fatalf("%d objects read from the wire with a transform set", n)
	}
}
