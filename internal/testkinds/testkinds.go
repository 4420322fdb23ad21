// Package testkinds holds the custom resource definitions that Lariat's own
// tests install: Widget (installed at start, with a status subresource) and
// Gadget (installed late, to test kinds that appear while running).
package testkinds

import (
	"path/filepath"
	"runtime"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kinds and resources of the test CRDs.
var (
	WidgetGVK = schema.GroupVersionKind{Group: "test.lariat.dev", Version: "v1", Kind: "Widget"}
	WidgetGVR = schema.GroupVersionResource{Group: "test.lariat.dev", Version: "v1", Resource: "widgets"}
	GadgetGVK = schema.GroupVersionKind{Group: "late.lariat.dev", Version: "v1", Kind: "Gadget"}
	GadgetGVR = schema.GroupVersionResource{Group: "late.lariat.dev", Version: "v1", Resource: "gadgets"}
)

// CRDDir is the directory of CRDs to install at start (Widget).
func CRDDir() string { return filepath.Join(here(), "crds") }

// LateCRDDir is the directory of CRDs to install while running (Gadget).
func LateCRDDir() string { return filepath.Join(here(), "late") }

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

// Gadget returns an unstructured Gadget.
func Gadget(namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(GadgetGVK)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}
