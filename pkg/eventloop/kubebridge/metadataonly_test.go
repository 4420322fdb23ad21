package kubebridge_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
)

// metaRecorder describes every object the loop hands its handlers: its Go
// type, kind and marker annotation, so a test can tell a metadata object
// from a whole one and a missing one.
type metaRecorder struct {
	mu      sync.Mutex
	resyncs []map[string]string // key -> description
	changes []string            // "key: prev -> new"
}

func (r *metaRecorder) String() string                    { return "metadata" }
func (r *metaRecorder) HandlesEvent(eventloop.Event) bool { return true }
func (r *metaRecorder) Revert(eventloop.Event) error      { return nil }

func (r *metaRecorder) Resync(_ eventloop.Event, state any, _ int, _ eventloop.ResyncOperations) error {
	st, _ := state.(kubebridge.State)
	objs := map[string]string{}
	for key, obj := range st[configMaps] {
		objs[key] = describe(obj)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resyncs = append(r.resyncs, objs)
	return nil
}

func (r *metaRecorder) Update(ev eventloop.Event, _ eventloop.UpdateOperations) (string, error) {
	change, ok := ev.(*kubebridge.KubeStateChange)
	if !ok || change.Resource != configMaps {
		return "", nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, fmt.Sprintf("%s: %s -> %s", change.Key, describe(change.PrevValue), describe(change.NewValue)))
	return "recorded", nil
}

func (r *metaRecorder) seen() ([]map[string]string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]string(nil), r.resyncs...), append([]string(nil), r.changes...)
}

// describe names an object's Go type, its kind as stamped and its marker
// annotation; "-" for none.
func describe(obj runtime.Object) string {
	if obj == nil {
		return "-"
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T (%v)", obj, err)
	}
	return fmt.Sprintf("%T %s v=%s", obj, obj.GetObjectKind().GroupVersionKind().Kind, m.GetAnnotations()["v"])
}

// TestMetadataOnlyKindReachesTheLoopAsMetadata: a kind whose cache is
// metadata-only (cache.KindOptions.MetadataOnly) can be watched by the
// bridge, and what the loop's handlers get is every object's metadata
// (*metav1.PartialObjectMetadata with the kind stamped), never a missing
// object: the startup resync carries every object that exists, changes
// carry the new metadata, and a deletion carries the metadata the loop
// last had.
func TestMetadataOnlyKindReachesTheLoopAsMetadata(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ns := controlplanetest.Namespace(t, cp.Config())
	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	for _, name := range []string{"a", "b"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"v": "1"}}, Data: map[string]string{"big": "spec"}}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns},
		Kinds:   map[schema.GroupVersionKind]cache.KindOptions{gvk: {MetadataOnly: ptr.To(true)}},
		Logger:  log,
	})
	factory, err := controller.NewSharedControllerFactory(caches, &controller.SharedControllerFactoryOptions{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	bridge := kubebridge.New(factory, log)
	if err := bridge.Watch(ctx, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("watching a metadata-only kind: %v", err)
	}
	rec := &metaRecorder{}
	opts := eventloop.Options{Handlers: []eventloop.EventHandler{rec}, Logger: logrus.NewEntry(log)}
	bridge.Configure(&opts)
	loop, err := eventloop.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { loop.Close() })
	if err := loop.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := factory.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := bridge.Start(ctx, loop); err != nil {
		t.Fatal(err)
	}

	const partial = "*v1.PartialObjectMetadata ConfigMap"
	waitFor(t, "the startup resync", func() bool { r, _ := rec.seen(); return len(r) > 0 })
	resyncs, _ := rec.seen()
	want := map[string]string{ns + "/a": partial + " v=1", ns + "/b": partial + " v=1"}
	if fmt.Sprint(resyncs[0]) != fmt.Sprint(want) {
		t.Fatalf("startup resync of the metadata-only kind: %v, want %v", resyncs[0], want)
	}

	if _, err := cms.Patch(ctx, "a", "application/merge-patch+json", []byte(`{"metadata":{"annotations":{"v":"2"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wantChanges := []string{ns + "/a: " + partial + " v=1 -> " + partial + " v=2", ns + "/b: " + partial + " v=1 -> -"}
	deadline := time.Now().Add(time.Minute)
	for {
		_, changes := rec.seen()
		slices.Sort(changes) // two keys: their changes may reach the loop in either order
		if fmt.Sprint(changes) == fmt.Sprint(wantChanges) {
			break
		}
		if len(changes) >= len(wantChanges) || time.Now().After(deadline) {
			t.Fatalf("changes of the metadata-only kind: %q, want %q", changes, wantChanges)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
