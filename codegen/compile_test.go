package main

import (
	"path/filepath"
	"testing"
)

// usage is an operator's main package over the generated code: it must
// compile, and running its test shows that controllers are created once
// and share one factory between groups.
const usage = `package usage

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/generic"

	"example.com/demo/generated/controllers/demo.lariat.dev"
	democtl "example.com/demo/generated/controllers/demo.lariat.dev/v1"
	demov1alpha1ctl "example.com/demo/generated/controllers/demo.lariat.dev/v1alpha1"
)

func TestControllers(t *testing.T) {
	// Creating controllers makes no request, so no server is needed.
	f, err := generic.NewFactoryFromConfig(&rest.Config{Host: "http://127.0.0.1:1"}, runtime.NewScheme(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := demo.NewFactory(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := demo.NewFactory(f); err != nil {
		t.Fatalf("building a group factory twice: %v", err)
	}
	apps, err := d.Demo().V1().WebApp()
	if err != nil {
		t.Fatal(err)
	}
	again, err := d.Demo().V1().WebApp()
	if err != nil || again != apps {
		t.Fatalf("second WebApp() = %v, %v; want the first controller", again, err)
	}
	// The per-kind client and cache interfaces fit what controllers offer.
	var client democtl.WebAppClient = apps
	var cache democtl.WebAppCache = apps.Cache()
	_, _ = client, cache
	tenants, err := d.Demo().V1().Tenant()
	if err != nil {
		t.Fatal(err)
	}
	tenants.Enqueue("cluster-wide")
	var tenantCache democtl.TenantCache = tenants.Cache()
	_ = tenantCache
	if _, err := d.Demo().V1().Setting(); err != nil {
		t.Fatal(err)
	}
	probes, err := d.Demo().V1alpha1().Probe()
	if err != nil {
		t.Fatal(err)
	}
	if got := probes.GroupVersionKind().Version; got != "v1alpha1" {
		t.Fatalf("probe version %q", got)
	}
	// Status handlers of kinds whose conditions are wrangler's generic
	// shape (Task) or a type merely named Condition (Probe's, of
	// cluster-api's shape) build.
	_ = democtl.RegisterTaskStatusHandler
	_ = demov1alpha1ctl.RegisterProbeGeneratingHandler
	if got := tenants.GroupVersionKind().Kind; got != "Tenant" {
		t.Fatalf("kind %q", got)
	}
}
`

// TestGeneratedCodeCompiles builds, vets and tests the generated code in a
// module of its own that uses this checkout of Lariat.
func TestGeneratedCodeCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := demoModule(t)
	generate(t, dir)
	writeFile(t, filepath.Join(dir, "usage", "usage_test.go"), usage)
	goCmd(t, dir, "mod", "tidy")
	goCmd(t, dir, "build", "./...")
	goCmd(t, dir, "vet", "./...")
	goCmd(t, dir, "test", "-count=1", "./usage")
}
