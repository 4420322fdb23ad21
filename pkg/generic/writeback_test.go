package generic_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// createApplied creates a configmap the way client-side kubectl apply does:
// the whole object in the last-applied annotation, written by kubectl's
// field manager.
func createApplied(t *testing.T, ns, name string) {
	t.Helper()
	_, err := kube().CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{cache.LastAppliedAnnotation: `{"apiVersion":"v1","kind":"ConfigMap",` +
				`"metadata":{"name":"` + name + `","namespace":"` + ns + `"},"data":{"v":"0"}}`},
		},
		Data: map[string]string{"v": "0"},
	}, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCacheWriteBackKeepsServerMetadata is the wrangler pattern on a
// kubectl-applied object: a handler copies the cached object, changes it
// and writes it back with Update. Nothing the cache left out may disappear
// from the server: the last-applied annotation (which later kubectl apply
// runs need to remove fields) and managedFields.
func TestCacheWriteBackKeepsServerMetadata(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	createApplied(t, ns, "applied")

	f := newFactory(t, cp.Config(), ns)
	cms := newConfigMaps(t, f)
	ctx := context.Background()
	cms.OnChange(ctx, "touch", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm == nil || cm.Data["touched"] == "yes" {
			return cm, nil
		}
		cm = cm.DeepCopy()
		cm.Data["touched"] = "yes"
		return cms.Update(ctx, cm)
	})
	start(t, f)

	var got *corev1.ConfigMap
	eventually(t, "the handler's update", func() bool {
		got = getCM(t, ns, "applied")
		return got.Data["touched"] == "yes"
	})
	if got.Annotations[cache.LastAppliedAnnotation] == "" {
		t.Errorf("Update of a cached object removed %s from the server: annotations %v",
			cache.LastAppliedAnnotation, got.Annotations)
	}
	managers := map[string]bool{}
	for _, mf := range got.ManagedFields {
		managers[mf.Manager] = true
	}
	if !managers["kubectl-client-side-apply"] {
		t.Errorf("Update of a cached object dropped kubectl's managedFields entry: managers %v", managers)
	}
}
