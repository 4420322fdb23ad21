package kubedescriptor_test

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv30RetrieveFromAMetadataOnlyCache: a kind a controller only owns
// is what cache.Options.MetadataOnly is for, and pkg/dependents' Kubernetes
// descriptors read their kinds from the generic factory's cache. Served
// by a metadata-only cache, Retrieve must report what it reports from the
// default cache (or refuse): not a *metav1.PartialObjectMetadata, with no
// data, as the live value of an object the scheduler compares with its
// desired value and an object it deletes.
func TestAdv30RetrieveFromAMetadataOnlyCache(t *testing.T) {
	ctx := t.Context()
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	kube := controlplanetest.Clientset(cp.Config())
	ns := controlplanetest.Namespace(t, cp.Config())
	const manager = "kv-metaonly-test"
	desired := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{kubedescriptor.LabelManagedBy: manager}},
			Data:       map[string]string{"k": name}}
	}
	for _, name := range []string{"wanted", "obsolete"} {
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, desired(name), metav1.CreateOptions{FieldManager: manager}); err != nil {
			t.Fatal(err)
		}
	}
	wantedKey := kubedescriptor.KeyFor(configMapKind, ns, "wanted")
	retrieve := func(metadataOnly bool) map[string]string {
		t.Helper()
		caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{
			Default: cache.Options{Namespace: ns},
			Kinds:   map[schema.GroupVersionKind]cache.KindOptions{configMapKind: {MetadataOnly: ptr.To(metadataOnly)}}})
		d, err := kubedescriptor.New(configMapKind, kubedescriptor.Options{Clients: clients, Cache: caches, FieldManager: manager, Namespace: ns})
		if err != nil {
			// Refusing the cache is a right answer, if it says why.
			if !metadataOnly || !strings.Contains(err.Error(), "metadata-only") {
				t.Fatalf("New (metadata-only %v): %v", metadataOnly, err)
			}
			return nil
		}
		if err := caches.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := caches.WaitForCacheSync(ctx); err != nil {
			t.Fatal(err)
		}
		kvs, err := d.Retrieve(ctx, []kvscheduler.KVWithMetadata{{Key: wantedKey, Value: desired("wanted")}})
		if err != nil {
			t.Logf("Retrieve (metadata-only %v) refused: %v", metadataOnly, err)
			return nil
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
	want, got := retrieve(false), retrieve(true)
	if got == nil {
		return // a refusal is a right answer
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Retrieve of %s: metadata-only cache\n%s\ndefault cache\n%s", k, got[k], v)
		}
	}
}
