package kubedescriptor_test

import (
	"encoding/json"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// TestRetrieveFromACompactCache shows that Retrieve served by a compact
// cache, which selects the managed objects by the labels kept beside each
// encoded object instead of decoding every object of the kind, reports
// exactly what it reports from the default cache: the managed objects,
// whole, and not the unmanaged one beside them.
func TestRetrieveFromACompactCache(t *testing.T) {
	ctx := t.Context()
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	kube := controlplanetest.Clientset(cp.Config())
	ns := controlplanetest.Namespace(t, cp.Config())
	const manager = "kv-compact-test"
	for _, cm := range []struct {
		name    string
		managed bool
	}{{"managed-a", true}, {"unmanaged", false}, {"managed-b", true}} {
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.name, Namespace: ns, Labels: map[string]string{"app": "web"}},
			Data: map[string]string{"k": cm.name}}
		if cm.managed {
			// What the descriptor applies: its label and its stamp.
			obj.Labels[kubedescriptor.LabelManagedBy] = manager
			obj.Annotations = map[string]string{kubedescriptor.AnnotationAppliedAs: manager + ":" + kubedescriptor.KeyFor(configMapKind, ns, cm.name)}
		}
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	retrieve := func(compact bool) map[string]string {
		t.Helper()
		caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{
			Default: cache.Options{Namespace: ns},
			Kinds:   map[schema.GroupVersionKind]cache.KindOptions{configMapKind: {Compact: ptr.To(compact)}}})
		d, err := kubedescriptor.New(configMapKind, kubedescriptor.Options{Clients: clients, Cache: caches, FieldManager: manager, Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		if err := caches.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := caches.WaitForCacheSync(ctx); err != nil {
			t.Fatal(err)
		}
		kvs, err := d.Retrieve(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, kv := range kvs {
			b, err := json.Marshal(kv.Value)
			if err != nil {
				t.Fatal(err)
			}
			out[kv.Key] = string(b)
		}
		return out
	}
	got, want := retrieve(true), retrieve(false)
	keys := func(m map[string]string) []string {
		ks := make([]string, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	wantKeys := []string{kubedescriptor.KeyFor(configMapKind, ns, "managed-a"), kubedescriptor.KeyFor(configMapKind, ns, "managed-b")}
	if !slices.Equal(keys(want), wantKeys) || !slices.Equal(keys(got), wantKeys) {
		t.Fatalf("Retrieve: compact cache %v, default cache %v, want %v", keys(got), keys(want), wantKeys)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("Retrieve of %s: compact cache\n%s\ndefault cache\n%s", k, got[k], v)
		}
	}
}
