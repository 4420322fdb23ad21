package main

import (
	"bytes"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestGolden generates code for testdata/demo and compares every generated
// file with testdata/golden.
func TestGolden(t *testing.T) {
	dir := demoModule(t)
	generate(t, dir)
	got := generatedFiles(t, dir)
	goldenDir := filepath.Join("testdata", "golden")

	if *update {
		if err := os.RemoveAll(goldenDir); err != nil {
			t.Fatal(err)
		}
		for rel, data := range got {
			writeFile(t, filepath.Join(goldenDir, filepath.FromSlash(rel)), string(data))
		}
		return
	}

	want := generatedFiles(t, goldenDir)
	// generatedFiles filters by path; golden files all qualify.
	if g, w := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)); !slices.Equal(g, w) {
		t.Fatalf("generated files differ from golden files (run go test -run TestGolden -update):\n got: %q\nwant: %q", g, w)
	}
	for rel, data := range got {
		if !bytes.Equal(data, want[rel]) {
			t.Errorf("%s differs from its golden file (run go test -run TestGolden -update); got:\n%s", rel, data)
		}
	}
}

// TestSecondRunChangesNothing runs the generator twice: the second run must
// write no file and leave every file as the first run wrote it.
func TestSecondRunChangesNothing(t *testing.T) {
	dir := demoModule(t)
	if out := generate(t, dir); out == "" {
		t.Fatal("first run wrote nothing")
	}
	first := generatedFiles(t, dir)
	if out := generate(t, dir); out != "" {
		t.Errorf("second run wrote files:\n%s", out)
	}
	second := generatedFiles(t, dir)
	if !maps.EqualFunc(first, second, bytes.Equal) {
		t.Error("second run changed the generated files")
	}
}
