// Package testkinds holds the custom resource definitions that Lariat's own
// tests install: Widget (installed at start, with a status subresource whose
// conditions have metav1.Condition's schema and limits), and Gizmo kinds in
// groups unique to each call (installed while running). Gadget is a kind that
// is never installed.
package testkinds

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kinds and resources of the test CRDs.
var (
	WidgetGVK = schema.GroupVersionKind{Group: "test.lariat.dev", Version: "v1", Kind: "Widget"}
	WidgetGVR = schema.GroupVersionResource{Group: "test.lariat.dev", Version: "v1", Resource: "widgets"}
	GadgetGVK = schema.GroupVersionKind{Group: "late.lariat.dev", Version: "v1", Kind: "Gadget"}
)

// CRDDir is the directory of CRDs to install at start (Widget).
func CRDDir() string { return filepath.Join(here(), "crds") }

func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Widget returns an unstructured Widget.
func Widget(namespace, name string, size int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"size": size},
	}}
	u.SetGroupVersionKind(WidgetGVK)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// NewLateKind writes the CRD of a namespaced kind "Gizmo" in a group unique
// to this call into a new directory under dir and returns the directory and
// the kind's GVK and GVR. Tests that install a CRD while running use it, so
// they can run again against the same API server.
func NewLateKind(dir string) (crdDir string, gvk schema.GroupVersionKind, gvr schema.GroupVersionResource, err error) {
	group := fmt.Sprintf("late%d.lariat.dev", time.Now().UnixNano())
	gvk = schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Gizmo"}
	gvr = schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gizmos"}
	crd := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo, listKind: GizmoList}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`, group)
	crdDir, err = os.MkdirTemp(dir, "crd-")
	if err != nil {
		return "", gvk, gvr, err
	}
	return crdDir, gvk, gvr, os.WriteFile(filepath.Join(crdDir, "gizmos.yaml"), []byte(crd), 0o600)
}

// Object returns an unstructured object of gvk.
func Object(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}
