package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRemovedKindsLoseTheirControllers generates, removes a kind from the
// API, and generates again: the kind's controller file goes (it would no
// longer compile), a file of the user's in the same folder stays.
func TestRemovedKindsLoseTheirControllers(t *testing.T) {
	dir := demoModule(t)
	generate(t, dir)
	versionDir := filepath.Join(dir, "generated", "controllers", "demo.lariat.dev", "v1")
	tenant := filepath.Join(versionDir, "tenant.go")
	if _, err := os.Stat(tenant); err != nil {
		t.Fatalf("first run: %v", err)
	}
	mine := filepath.Join(versionDir, "mine.go")
	writeFile(t, mine, "package v1\n\n// Hand-written helpers live next to generated code.\n")

	if err := os.Remove(filepath.Join(dir, "api", "v1", "tenant_types.go")); err != nil {
		t.Fatal(err)
	}
	out := generate(t, dir)
	if _, err := os.Stat(tenant); !os.IsNotExist(err) {
		t.Errorf("tenant.go survived the removal of the Tenant kind (stat: %v)", err)
	}
	if !strings.Contains(out, "tenant.go") {
		t.Errorf("the run does not list the deleted tenant.go:\n%s", out)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("a hand-written file was deleted: %v", err)
	}
	if _, err := os.Stat(filepath.Join(versionDir, "webapp.go")); err != nil {
		t.Errorf("another kind's controller went too: %v", err)
	}
}
