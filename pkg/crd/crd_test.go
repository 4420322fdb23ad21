package crd_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/crd"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) { controlplanetest.Main(m, controlplane.Options{}, &cp) }

func crdClient(t *testing.T) *apiextensionsclient.Clientset {
	t.Helper()
	cs, err := apiextensionsclient.NewForConfig(cp.Config())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// createObject creates an object of gvr in namespace ns (cluster-wide when
// empty) through the dynamic client: it works only once the CRD is served.
func createObject(t *testing.T, gvr schema.GroupVersionResource, kind, ns, name string, spec map[string]any) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cp.Config())
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	u.SetAPIVersion(gvr.GroupVersion().String())
	u.SetKind(kind)
	u.SetName(name)
	u.SetNamespace(ns)
	if _, err := dyn.Resource(gvr).Namespace(ns).Create(t.Context(), u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a %s right after Install: %v", kind, err)
	}
	// Some of these objects have fixed names outside any test namespace:
	// delete them, so the test passes again in the same control plane
	// (go test -count).
	t.Cleanup(func() {
		if err := dyn.Resource(gvr).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete the %s %s: %v", kind, name, err)
		}
	})
}

// The generator's manifests install and are served when Install returns;
// installing again keeps what another writer added to the CRD.
func TestInstallGeneratedManifests(t *testing.T) {
	ctx := t.Context()
	crds, err := crd.FromFS(os.DirFS("../../crds"), ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) == 0 {
		t.Fatal("no CRDs read from the generator's directory")
	}
	if err := crd.Install(ctx, cp.Config(), crds...); err != nil {
		t.Fatal(err)
	}
	ns := controlplanetest.Namespace(t, cp.Config())
	createObject(t, schema.GroupVersionResource{Group: "demo.lariat.dev", Version: "v1", Resource: "webapps"}, "WebApp", ns, "web", map[string]any{"image": "nginx"})

	client := crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	got, err := client.Get(ctx, crds[0].Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Annotations = map[string]string{"cert-manager.io/inject-ca-from": "ns/cert"}
	if _, err := client.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := crd.Install(ctx, cp.Config(), crds...); err != nil {
		t.Fatal(err)
	}
	got, err = client.Get(ctx, crds[0].Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Annotations["cert-manager.io/inject-ca-from"] != "ns/cert" {
		t.Fatalf("a field another writer added was removed by Install: %v", got.Annotations)
	}
}

// A CRD built from a Type installs, cluster-scoped, and a changed Type
// updates it.
func TestInstallTypeAndUpdate(t *testing.T) {
	ctx := t.Context()
	typ := crd.Type{GVK: schema.GroupVersionKind{Group: "type.crd.lariat.dev", Version: "v1", Kind: "Setting"}, NonNamespaced: true, Status: true}
	if err := crd.Install(ctx, cp.Config(), typ.CRD()); err != nil {
		t.Fatal(err)
	}
	createObject(t, schema.GroupVersionResource{Group: "type.crd.lariat.dev", Version: "v1", Resource: "settings"}, "Setting", "", "global", nil)
	typ.ShortNames = []string{"stg"}
	if err := crd.Install(ctx, cp.Config(), typ.CRD()); err != nil {
		t.Fatal(err)
	}
	got, err := crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "settings.type.crd.lariat.dev", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Names.ShortNames) != 1 || got.Spec.Names.ShortNames[0] != "stg" {
		t.Fatalf("short names after update: %v", got.Spec.Names.ShortNames)
	}
}

// A Type without Plural gets the resource name wrangler guesses for its
// kind ("policies", not "policys"), so a port of wrangler's
// crd.NamespacedType("Policy.group/v1") installs the CRD the cluster
// already has rather than a second one.
func TestTypePluralIsTheGuessedResource(t *testing.T) {
	for kind, want := range map[string]string{
		"Policy": "policies", "Gateway": "gateways", "Box": "boxes", "Status": "statuses", "Setting": "settings", "Endpoints": "endpoints",
	} {
		c := crd.Type{GVK: schema.GroupVersionKind{Group: "g.lariat.dev", Version: "v1", Kind: kind}}.CRD()
		if c.Name != want+".g.lariat.dev" || c.Spec.Names.Plural != want {
			t.Errorf("%s: CRD %q with plural %q, want %s", kind, c.Name, c.Spec.Names.Plural, want)
		}
	}
	gvk := schema.GroupVersionKind{Group: "plural.crd.lariat.dev", Version: "v1", Kind: "Policy"}
	c := crd.Type{GVK: gvk}.CRD()
	if err := crd.Install(t.Context(), cp.Config(), c); err != nil {
		t.Fatal(err)
	}
	createObject(t, gvk.GroupVersion().WithResource("policies"), "Policy", "default", "p1", nil)
}

// A CRD that cannot be established (its kind is already another CRD's in
// the group) fails Install at the timeout, naming the CRD and the
// condition that is not True.
func TestInstallNamesTheCRDThatIsNotEstablished(t *testing.T) {
	ctx := t.Context()
	first := crd.Type{GVK: schema.GroupVersionKind{Group: "conflict.crd.lariat.dev", Version: "v1", Kind: "Thing"}}
	if err := crd.Install(ctx, cp.Config(), first.CRD()); err != nil {
		t.Fatal(err)
	}
	second := first
	second.Plural = "otherthings"
	err := crd.Installer{Timeout: 5 * time.Second}.Install(ctx, cp.Config(), second.CRD())
	if err == nil {
		t.Fatal("a CRD whose kind is in use was reported installed")
	}
	for _, want := range []string{"otherthings.conflict.crd.lariat.dev", "NamesAccepted=False"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
}

// Read refuses a stream with something other than a CRD in it.
func TestReadRefusesOtherKinds(t *testing.T) {
	_, err := crd.Read(strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"))
	if err == nil || !strings.Contains(err.Error(), "ConfigMap") {
		t.Fatalf("reading a ConfigMap as CRDs: %v", err)
	}
	crds, err := crd.Read(strings.NewReader("---\n" + `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"a.b"}}` + "\n---\n"))
	if err != nil || len(crds) != 1 || crds[0].Name != "a.b" {
		t.Fatalf("reading one CRD: %v %v", crds, err)
	}
}
