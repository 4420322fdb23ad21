package files

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestWriteOnlyChanges(t *testing.T) {
	dir := t.TempDir()
	a, b, gone := filepath.Join(dir, "x", "a.go"), filepath.Join(dir, "b.go"), filepath.Join(dir, "gone.go")
	if err := os.WriteFile(gone, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := Set{a: []byte("a"), b: []byte("b"), gone: nil}
	changed, err := set.Write()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{b, gone, a}; !slices.Equal(changed, want) {
		t.Fatalf("first write changed %q, want %q", changed, want)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Fatalf("%s still exists: %v", gone, err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(a, old, old); err != nil {
		t.Fatal(err)
	}
	if changed, err := set.Write(); err != nil || len(changed) != 0 {
		t.Fatalf("second write changed %q, %v", changed, err)
	}
	if fi, err := os.Stat(a); err != nil || !fi.ModTime().Equal(old) {
		t.Fatalf("unchanged file was rewritten: %v", err)
	}
}

func TestAddRejectsDuplicates(t *testing.T) {
	set := Set{"a": []byte("1")}
	if err := set.Add(map[string][]byte{"a": []byte("2")}); err == nil {
		t.Fatal("a path generated twice was accepted")
	}
}
