package main

import (
	"bytes"
	"maps"
	"testing"
)

// TestGoGenerate runs the //go:generate line of testdata/demo/generate.go
// with the go command, as an operator author would, and checks that it
// writes the golden files.
func TestGoGenerate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the generator")
	}
	dir := demoModule(t)
	goCmd(t, dir, "generate", "./...")
	got := generatedFiles(t, dir)
	want := generatedFiles(t, "testdata/golden")
	if !maps.EqualFunc(got, want, bytes.Equal) {
		t.Error("go generate wrote other files than the golden ones (compare with TestGolden)")
	}
}
