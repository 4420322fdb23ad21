package globalscheme_test

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	// What a sample-controller-style program does so its event recorder
	// can name its own kinds: the custom kind goes into the global scheme.
	// This binary holds only tests that expect it.
	if err := demov1.AddToScheme(scheme.Scheme); err != nil {
		os.Stderr.WriteString("register demo.lariat.dev/v1: " + err.Error() + "\n")
		os.Exit(1)
	}
	controlplanetest.Main(m, controlplane.Options{CRDDirs: []string{"../../../../crds"}}, &cp)
}

// wireLog records the Content-Type of every request body sent and the
// Accept header of every request, by path, so a test can tell which wire
// format the client chose.
type wireLog struct {
	mu     sync.Mutex
	sent   map[string][]string // path -> Content-Type of requests with a body
	accept map[string][]string // path -> Accept of every request
}

func newWireLog() *wireLog {
	return &wireLog{sent: map[string][]string{}, accept: map[string][]string{}}
}

func (l *wireLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		l.mu.Lock()
		if ct := r.Header.Get("Content-Type"); ct != "" {
			l.sent[r.URL.Path] = append(l.sent[r.URL.Path], ct)
		}
		l.accept[r.URL.Path] = append(l.accept[r.URL.Path], r.Header.Get("Accept"))
		l.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

// under returns what m recorded for paths starting with prefix.
func (l *wireLog) under(m map[string][]string, prefix string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for path, v := range m {
		if strings.HasPrefix(path, prefix) {
			out = append(out, v...)
		}
	}
	return out
}

// factory returns a client factory whose requests l records.
func (l *wireLog) factory(t *testing.T, opts *client.SharedClientFactoryOptions) *client.SharedClientFactory {
	t.Helper()
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(l.wrap)
	f, err := client.NewSharedClientFactory(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A custom kind in the global scheme is written as JSON, since its Go type
// has no protobuf marshalling and the API server serves custom resources
// without protobuf; built-in kinds still go as protobuf. Before the wire
// format was chosen from the Go type, Create failed with "does not implement
// the protobuf marshalling interface".
func TestCustomKindInGlobalSchemeUsesJSON(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	wire := newWireLog()
	f := wire.factory(t, nil)

	apps, err := f.ForObject(&demov1.WebApp{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := apps.Watch(ctx, ns, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	created := &demov1.WebApp{}
	in := &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: demov1.WebAppSpec{Image: "nginx"}}
	if err := apps.Create(ctx, ns, in, created, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create WebApp: %v", err)
	}
	if created.UID == "" || created.Spec.Image != "nginx" || created.Kind != "WebApp" {
		t.Fatalf("created object not read back: %+v", created)
	}
	got := &demov1.WebApp{}
	if err := apps.Get(ctx, ns, "a", got, metav1.GetOptions{}); err != nil {
		t.Fatalf("get WebApp: %v", err)
	}
	got.Spec.Image = "nginx:2"
	if err := apps.Update(ctx, ns, got, &demov1.WebApp{}, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update WebApp: %v", err)
	}
	list := &demov1.WebAppList{}
	if err := apps.List(ctx, ns, list, metav1.ListOptions{}); err != nil {
		t.Fatalf("list WebApps: %v", err)
	}
	if len(list.Items) != 1 || list.Items[0].Spec.Image != "nginx:2" {
		t.Fatalf("list: %+v", list.Items)
	}
	select {
	case e := <-w.ResultChan():
		app, ok := e.Object.(*demov1.WebApp)
		if e.Type != watch.Added || !ok || app.Name != "a" {
			t.Fatalf("watch event %s %T %+v", e.Type, e.Object, e.Object)
		}
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
	if err := apps.Delete(ctx, ns, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete WebApp: %v", err)
	}
	// Create, Update and Delete sent bodies.
	appWire := "/apis/demo.lariat.dev/v1/namespaces/" + ns + "/webapps"
	if cts := wire.under(wire.sent, appWire); len(cts) != 3 || slices.ContainsFunc(cts, func(ct string) bool { return ct != "application/json" }) {
		t.Errorf("WebApp request bodies sent as %q, want 3 times application/json", cts)
	}

	configMaps, err := f.ForObject(&corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}
	if err := configMaps.Create(ctx, ns, cm, &corev1.ConfigMap{}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ConfigMap: %v", err)
	}
	cts := wire.under(wire.sent, "/api/v1/namespaces/"+ns+"/configmaps")
	if len(cts) != 1 || cts[0] != "application/vnd.kubernetes.protobuf" {
		t.Errorf("ConfigMap create sent as %q, want protobuf", cts)
	}
}

// A kind whose Go type speaks protobuf goes as protobuf even when only the
// factory's own scheme knows it, not client-go's global one: the
// CustomResourceDefinition kind, which the API server serves over protobuf.
func TestProtobufKindOutsideGlobalScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	wire := newWireLog()
	f := wire.factory(t, &client.SharedClientFactoryOptions{Scheme: s})
	crds, err := f.ForObject(&apiextensionsv1.CustomResourceDefinition{})
	if err != nil {
		t.Fatal(err)
	}
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := crds.List(t.Context(), "", list, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list.Items, func(crd apiextensionsv1.CustomResourceDefinition) bool {
		return crd.Name == "webapps.demo.lariat.dev"
	}) {
		t.Fatalf("CRD list lacks webapps.demo.lariat.dev: %d items", len(list.Items))
	}
	accepts := wire.under(wire.accept, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
	if len(accepts) != 1 || !strings.HasPrefix(accepts[0], "application/vnd.kubernetes.protobuf") {
		t.Errorf("CRD list accepted %q, want protobuf first", accepts)
	}
}
