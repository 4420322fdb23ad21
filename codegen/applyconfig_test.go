package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApplyConfigurationsForEveryKind checks that every kind gets an apply
// configuration, whether or not its type has client-gen's +genclient
// (Setting and Probe have none; Tenant is cluster-scoped), that ForKind
// knows them, and that a deleted output directory comes back.
func TestApplyConfigurationsForEveryKind(t *testing.T) {
	dir := demoModule(t)
	generate(t, dir)
	applyDir := filepath.Join(dir, "generated", "applyconfiguration")
	check := func() {
		t.Helper()
		for _, f := range []string{"api/v1/setting.go", "api/v1/webapp.go", "api/v1/tenant.go", "api/v1alpha1/probe.go"} {
			if _, err := os.Stat(filepath.Join(applyDir, f)); err != nil {
				t.Errorf("no apply configuration %s: %v", f, err)
			}
		}
		utils, err := os.ReadFile(filepath.Join(applyDir, "utils.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range []string{`WithKind("Setting")`, `WithKind("Probe")`, `WithKind("Tenant")`, `WithKind("WebApp")`} {
			if !strings.Contains(string(utils), kind) {
				t.Errorf("ForKind does not know %s:\n%s", kind, utils)
			}
		}
		tenant, err := os.ReadFile(filepath.Join(applyDir, "api", "v1", "tenant.go"))
		if err == nil && !strings.Contains(string(tenant), "func Tenant(name string) *TenantApplyConfiguration") {
			t.Errorf("the cluster-scoped Tenant's constructor takes a namespace:\n%s", tenant)
		}
	}
	check()
	if err := os.RemoveAll(applyDir); err != nil {
		t.Fatal(err)
	}
	generate(t, dir)
	check()
}

// TestRemovedKindsLoseApplyConfigurationsAndCRDs removes a kind and
// generates again: its apply configurations and its CRD go, files of the
// user's in the same folders stay.
func TestRemovedKindsLoseApplyConfigurationsAndCRDs(t *testing.T) {
	dir := demoModule(t)
	generate(t, dir)
	versionDir := filepath.Join(dir, "generated", "applyconfiguration", "api", "v1")
	mine := filepath.Join(versionDir, "mine.go")
	writeFile(t, mine, "package v1\n\n// Hand-written helpers live next to generated code.\n")
	myCRD := filepath.Join(dir, "crds", "mine.yaml")
	writeFile(t, myCRD, "# a CRD of the user's\n")
	if err := os.Remove(filepath.Join(dir, "api", "v1", "tenant_types.go")); err != nil {
		t.Fatal(err)
	}
	generate(t, dir)
	for _, f := range []string{"tenant.go", "tenantspec.go", "tenantstatus.go"} {
		if _, err := os.Stat(filepath.Join(versionDir, f)); !os.IsNotExist(err) {
			t.Errorf("%s survived the removal of the Tenant kind (stat: %v)", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "crds", "demo.lariat.dev_tenants.yaml")); !os.IsNotExist(err) {
		t.Errorf("the Tenant CRD survived the removal of the kind (stat: %v)", err)
	}
	for _, f := range []string{mine, myCRD} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("a hand-written file was deleted: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(versionDir, "webapp.go")); err != nil {
		t.Errorf("another kind's apply configuration went too: %v", err)
	}
}
