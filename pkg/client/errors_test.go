package client_test

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestUnstructuredErrorsCarryTheServersMessage: a request of an
// unstructured client that the API server refuses returns the server's
// own reason and message (who may not do what, which object is missing),
// as a typed client's does, not client-go's "unknown" stand-in.
func TestUnstructuredErrorsCarryTheServersMessage(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx := t.Context()
	admin, err := newFactory(t).ForKind(testkinds.WidgetGVK)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Create(ctx, ns, testkinds.Widget(ns, "w", 1), &unstructured.Unstructured{}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = admin.Get(ctx, ns, "missing", &unstructured.Unstructured{}, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `"missing" not found`) {
		t.Errorf("get of a missing widget: %v; want NotFound with the server's message", err)
	}

	cfg := rest.CopyConfig(cp.Config())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "nobody"}
	f, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	nobody, err := f.ForKind(testkinds.WidgetGVK)
	if err != nil {
		t.Fatal(err)
	}
	err = nobody.Patch(ctx, ns, "w", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), &unstructured.Unstructured{}, metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "nobody" cannot patch`) {
		t.Errorf("patch without permission: %v; want Forbidden with the server's message", err)
	}
}
