package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeLayoutNamesEveryPackage: the README's Layout table names every
// top-level folder of pkg/ and compat/, so a package added without a row
// is caught (pkg/crd, pkg/finalizer and compat/lasso once were).
func TestReadmeLayoutNamesEveryPackage(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(readme), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no ## Layout section")
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	checked := 0
	for _, parent := range []string{"pkg", "compat"} {
		entries, err := os.ReadDir(filepath.Join(root, parent))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			checked++
			if name := parent + "/" + e.Name(); !strings.Contains(layout, "`"+name+"`") {
				t.Errorf("README.md's Layout table does not name `%s`", name)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no packages found under pkg/ and compat/")
	}
}
