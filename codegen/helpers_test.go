package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// repoRoot is the Lariat module's root, found from this file's path so the
// tests work from any checkout.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot find the test file's path")
	}
	return filepath.Dir(filepath.Dir(file))
}

// demoModule copies testdata/demo into a temporary module that requires
// Lariat from this checkout, ready for the generator.
func demoModule(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	dir := t.TempDir()
	copyTree(t, filepath.Join(root, "codegen", "testdata", "demo"), dir)
	gomod := "module example.com/demo\n\ngo 1.26.0\n\nreplace github.com/lariat-dev/lariat => " + root + "\n"
	writeFile(t, filepath.Join(dir, "go.mod"), gomod)
	// Lariat's checksums cover every module the demo needs, so tidy needs
	// no network when the module cache is warm.
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "go.sum"), string(sum))
	goCmd(t, dir, "mod", "tidy")
	return dir
}

// goCmd runs the go command in dir and fails the test with its output on
// error.
func goCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// generate runs the command as go generate would, in dir.
func generate(t *testing.T, dir string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args := []string{"-C", dir, "-paths", "./api/...", "-output", "./generated", "-crd-dir", "./crds",
		"-header", "hack_boilerplate.go.txt", "-v"}
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("codegen: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}

// generatedFiles returns the files below dir that the generator wrote,
// by slash-separated relative path.
func generatedFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !isGenerated(rel) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		got[rel] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func isGenerated(rel string) bool {
	return strings.HasPrefix(filepath.Base(rel), "zz_generated.") ||
		strings.HasPrefix(rel, "generated/") || strings.HasPrefix(rel, "crds/")
}
