package kubedescriptor_test

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// TestOwnedProjectionHoldsTheManagersFieldsOnly: a ConfigMap applied by
// one field manager, to which another adds a label and a data entry, read
// with its managedFields, projects onto the first manager's fields alone;
// applying the projection again with that manager changes nothing (same
// resourceVersion, the other manager's fields kept). An object without an
// Apply entry of the manager has no projection.
func TestOwnedProjectionHoldsTheManagersFieldsOnly(t *testing.T) {
	ctx := t.Context()
	ns := controlplanetest.Namespace(t, cp.Config())
	cms := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns)
	apply := func(manager, body string) *corev1.ConfigMap {
		t.Helper()
		force := true
		cm, err := cms.Patch(ctx, "held", types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: manager, Force: &force})
		if err != nil {
			t.Fatal(err)
		}
		return cm
	}
	apply("mine", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held","labels":{"mine":"1"},"annotations":{"order":"x"}},"data":{"a":"1"}}`)
	live := apply("theirs", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held","labels":{"theirs":"2"}},"data":{"b":"2"}}`)

	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	u, ok, err := kubedescriptor.OwnedProjection(live, gvk, "mine")
	if err != nil || !ok {
		t.Fatalf("OwnedProjection: ok %v, err %v", ok, err)
	}
	want := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "held", "namespace": ns, "labels": map[string]any{"mine": "1"}, "annotations": map[string]any{"order": "x"}},
		"data":     map[string]any{"a": "1"}}
	if !reflect.DeepEqual(u.Object, want) {
		t.Fatalf("projection %v, want %v", u.Object, want)
	}
	body, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	again := apply("mine", string(body))
	if again.ResourceVersion != live.ResourceVersion || !reflect.DeepEqual(again.Data, live.Data) || !reflect.DeepEqual(again.Labels, live.Labels) {
		t.Errorf("applying the projection changed the object: rv %s -> %s, data %v -> %v, labels %v -> %v",
			live.ResourceVersion, again.ResourceVersion, live.Data, again.Data, live.Labels, again.Labels)
	}
	if _, ok, err := kubedescriptor.OwnedProjection(live, gvk, "nobody"); ok || err != nil {
		t.Errorf("OwnedProjection of a manager without an Apply entry: ok %v, err %v; want no projection", ok, err)
	}
}
