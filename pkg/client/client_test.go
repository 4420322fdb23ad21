package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	controlplanetest.Main(m, controlplane.Options{CRDDirs: []string{testkinds.CRDDir()}}, &cp)
}

func newFactory(t *testing.T) *client.SharedClientFactory {
	t.Helper()
	f, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

var configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")

func TestTypedCRUDCarriesKind(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx := t.Context()
	c, err := newFactory(t).ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	if c.GroupVersionResource().Resource != "configmaps" || !c.Namespaced() {
		t.Fatalf("mapping: %s namespaced=%v", c.GroupVersionResource(), c.Namespaced())
	}
	assertKind := func(what string, obj schema.ObjectKind) {
		t.Helper()
		if got := obj.GroupVersionKind(); got != configMapGVK {
			t.Errorf("%s: kind %v, want %v", what, got, configMapGVK)
		}
	}

	created := &corev1.ConfigMap{}
	in := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "1"}}
	if err := c.Create(ctx, ns, in, created, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	assertKind("create", created.GetObjectKind())
	if created.UID == "" || created.Data["k"] != "1" {
		t.Fatalf("created object not read back: %+v", created)
	}

	got := &corev1.ConfigMap{}
	if err := c.Get(ctx, ns, "a", got, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	assertKind("get", got.GetObjectKind())

	got.Data["k"] = "2"
	updated := &corev1.ConfigMap{}
	if err := c.Update(ctx, ns, got, updated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if updated.Data["k"] != "2" {
		t.Fatalf("update not applied: %v", updated.Data)
	}
	// The stale copy now conflicts: optimistic concurrency reaches the caller.
	got.Data["k"] = "3"
	if err := c.Update(ctx, ns, got, &corev1.ConfigMap{}, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: want Conflict, got %v", err)
	}

	patched := &corev1.ConfigMap{}
	if err := c.Patch(ctx, ns, "a", types.MergePatchType, []byte(`{"data":{"p":"x"}}`), patched, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if patched.Data["p"] != "x" || patched.Data["k"] != "2" {
		t.Fatalf("merge patch: %v", patched.Data)
	}

	if err := c.Create(ctx, ns, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"x": "y"}}}, &corev1.ConfigMap{}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list := &corev1.ConfigMapList{}
	if err := c.List(ctx, ns, list, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("list: %d items, want 2", len(list.Items))
	}
	if list.Kind != "ConfigMapList" || list.Items[0].Kind != "ConfigMap" {
		t.Errorf("list kinds: %q / %q", list.Kind, list.Items[0].Kind)
	}

	if err := c.DeleteCollection(ctx, ns, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "x=y"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, ns, list, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Fatalf("after deletes: %d items, %v", len(list.Items), err)
	}
	if err := c.Get(ctx, ns, "a", got, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get deleted: want NotFound, got %v", err)
	}
}

func TestUnstructuredCustomResource(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx := t.Context()
	c, err := newFactory(t).ForKind(testkinds.WidgetGVK)
	if err != nil {
		t.Fatal(err)
	}
	w := &unstructured.Unstructured{}
	if err := c.Create(ctx, ns, testkinds.Widget(ns, "w", 3), w, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if w.GroupVersionKind() != testkinds.WidgetGVK {
		t.Fatalf("kind %v", w.GroupVersionKind())
	}

	// Status goes through its subresource only.
	_ = unstructured.SetNestedField(w.Object, true, "status", "ready")
	_ = unstructured.SetNestedField(w.Object, int64(99), "spec", "size")
	afterStatus := &unstructured.Unstructured{}
	if err := c.UpdateStatus(ctx, ns, w, afterStatus, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ready, _, _ := unstructured.NestedBool(afterStatus.Object, "status", "ready")
	size, _, _ := unstructured.NestedInt64(afterStatus.Object, "spec", "size")
	if !ready || size != 3 {
		t.Fatalf("UpdateStatus: ready=%v size=%d, want true and the unchanged 3", ready, size)
	}

	// Patching the status subresource.
	patched := &unstructured.Unstructured{}
	err = c.Patch(ctx, ns, "w", types.MergePatchType, []byte(`{"status":{"ready":false}}`), patched, metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if ready, _, _ := unstructured.NestedBool(patched.Object, "status", "ready"); ready {
		t.Fatal("status patch not applied")
	}

	list := &unstructured.UnstructuredList{}
	if err := c.List(ctx, ns, list, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].GetKind() != "Widget" {
		t.Fatalf("list: %+v", list.Items)
	}
}

func TestWatchDeliversTypedEventsWithKind(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := newFactory(t).ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, ns, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := c.Create(ctx, ns, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "watched"}}, &corev1.ConfigMap{}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-w.ResultChan():
		cm, ok := e.Object.(*corev1.ConfigMap)
		if e.Type != watch.Added || !ok || cm.Name != "watched" || cm.Kind != "ConfigMap" || cm.APIVersion != "v1" {
			t.Fatalf("event %s %T %+v", e.Type, e.Object, e.Object)
		}
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
}

func TestWatchUnstructuredCustomResource(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := newFactory(t).ForKind(testkinds.WidgetGVK)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, ns, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := c.Create(ctx, ns, testkinds.Widget(ns, "watched", 1), &unstructured.Unstructured{}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-w.ResultChan():
		u, ok := e.Object.(*unstructured.Unstructured)
		if e.Type != watch.Added || !ok || u.GetName() != "watched" || u.GroupVersionKind() != testkinds.WidgetGVK {
			t.Fatalf("event %s %T %+v", e.Type, e.Object, e.Object)
		}
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
}

func TestCRDInstalledAfterFactoryIsFound(t *testing.T) {
	f := newFactory(t)
	// Prime discovery so a stale cache is what the factory must get past.
	if _, err := f.ForKind(configMapGVK); err != nil {
		t.Fatal(err)
	}
	// A group of its own per run, so the test can run again on the same
	// server.
	group := fmt.Sprintf("later%d.lariat.dev", time.Now().UnixNano())
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Thing"}
	if _, err := f.ForKind(gvk); !meta.IsNoMatchError(err) {
		t.Fatalf("before the CRD exists: want a no-match error, got %v", err)
	}
	dir := t.TempDir()
	crd := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.%[1]s}
spec:
  group: %[1]s
  scope: Cluster
  names: {plural: things, singular: thing, kind: Thing, listKind: ThingList}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`, group)
	if err := os.WriteFile(dir+"/thing.yaml", []byte(crd), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := controlplane.InstallCRDs(t.Context(), cp.Config(), dir); err != nil {
		t.Fatal(err)
	}
	c, err := f.ForKind(gvk)
	if err != nil {
		t.Fatalf("after the CRD is installed: %v", err)
	}
	if c.Namespaced() || c.GroupVersionResource().Resource != "things" {
		t.Fatalf("mapping: %s namespaced=%v", c.GroupVersionResource(), c.Namespaced())
	}
}

func TestOneClientPerResource(t *testing.T) {
	f := newFactory(t)
	a, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.ForObject(&corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.ForResource(corev1.SchemeGroupVersion.WithResource("configmaps"), true)
	if err != nil {
		t.Fatal(err)
	}
	if a != b || b != c {
		t.Fatal("the factory made more than one client for configmaps")
	}
}

func TestImpersonationIsEnforcedByRBAC(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx := t.Context()
	f := newFactory(t)
	roles, err := f.ForKind(rbacv1.SchemeGroupVersion.WithKind("Role"))
	if err != nil {
		t.Fatal(err)
	}
	bindings, err := f.ForKind(rbacv1.SchemeGroupVersion.WithKind("RoleBinding"))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
	}
	if err := roles.Create(ctx, ns, role, &rbacv1.Role{}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alice"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "read-configmaps"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "alice"}},
	}
	if err := bindings.Create(ctx, ns, binding, &rbacv1.RoleBinding{}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	admin, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	alice, err := admin.WithImpersonation(rest.ImpersonationConfig{UserName: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	// The API server's RBAC authorizer learns of the new binding through
	// its own informers: until then alice is forbidden.
	var listErr error
	_ = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		listErr = alice.List(ctx, ns, &corev1.ConfigMapList{}, metav1.ListOptions{})
		return listErr == nil, nil
	})
	if listErr != nil {
		t.Fatalf("alice may list configmaps in %s: %v", ns, listErr)
	}
	err = alice.Create(ctx, ns, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, &corev1.ConfigMap{}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("alice may not create: want Forbidden, got %v", err)
	}
	// The admin client is unaffected.
	if err := admin.Create(ctx, ns, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, &corev1.ConfigMap{}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// recordingServer captures request headers; the API server does not echo
// them back, so header behaviour is checked against a stand-in.
type recordingServer struct {
	mu      sync.Mutex
	headers []http.Header
}

func (s *recordingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.headers = append(s.headers, r.Header.Clone())
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
}

func (s *recordingServer) last() http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.headers[len(s.headers)-1]
}

func TestWireFormatAndAgent(t *testing.T) {
	rec := &recordingServer{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	f, err := client.NewSharedClientFactory(&rest.Config{Host: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cms, err := f.ForResourceKind(corev1.SchemeGroupVersion.WithResource("configmaps"), "ConfigMap", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Get(t.Context(), "ns", "x", &corev1.ConfigMap{}, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("want NotFound, got %v", err)
	}
	if accept := rec.last().Get("Accept"); accept != "application/vnd.kubernetes.protobuf,application/json" {
		t.Errorf("built-in kind Accept = %q, want protobuf first", accept)
	}

	widgets, err := f.ForResourceKind(testkinds.WidgetGVR, "Widget", true)
	if err != nil {
		t.Fatal(err)
	}
	_ = widgets.Get(t.Context(), "ns", "x", &unstructured.Unstructured{}, metav1.GetOptions{})
	if accept := rec.last().Get("Accept"); accept != "application/json" {
		t.Errorf("custom kind Accept = %q, want JSON", accept)
	}

	agent, err := cms.WithAgent("my-operator/1.0")
	if err != nil {
		t.Fatal(err)
	}
	_ = agent.Get(t.Context(), "ns", "x", &corev1.ConfigMap{}, metav1.GetOptions{})
	if ua := rec.last().Get("User-Agent"); ua != "my-operator/1.0" {
		t.Errorf("User-Agent = %q", ua)
	}
}

func TestDefaultTimeoutBoundsRequests(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-block
	}))
	defer srv.Close()
	defer close(block)
	f, err := client.NewSharedClientFactory(&rest.Config{Host: srv.URL}, &client.SharedClientFactoryOptions{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.ForResourceKind(corev1.SchemeGroupVersion.WithResource("configmaps"), "ConfigMap", true)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Get(t.Context(), "ns", "x", &corev1.ConfigMap{}, metav1.GetOptions{})
	if err == nil {
		t.Fatal("a request to a server that never answers returned no error")
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		t.Fatalf("want a client-side timeout, got an API status: %v", err)
	}
}
