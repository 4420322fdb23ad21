package doccheck

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// step is one marked block of README.md: commands to run or a file to
// write.
type step struct {
	line     int      // of the opening fence, for messages
	file     string   // path to write content to, for "file=" blocks
	content  string   // the block's text
	commands []string // for "run" blocks
}

// readmeSteps returns README.md's marked blocks in order.
func readmeSteps(t *testing.T, path string) []step {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		steps []step
		cur   *step
		body  strings.Builder
		n     int
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := sc.Text()
		if !strings.HasPrefix(line, "```") {
			if cur != nil {
				body.WriteString(line + "\n")
			}
			continue
		}
		if cur != nil { // closing fence of a marked block
			cur.content = body.String()
			if cur.file == "" {
				for _, l := range strings.Split(cur.content, "\n") {
					if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
						cur.commands = append(cur.commands, l)
					}
				}
			}
			steps = append(steps, *cur)
			cur = nil
			continue
		}
		info := strings.Fields(strings.TrimPrefix(line, "```"))
		if len(info) < 2 {
			continue // an unmarked block (or a closing fence of one, which has no info)
		}
		s := step{line: n}
		switch attr := info[1]; {
		case attr == "run":
		case strings.HasPrefix(attr, "file="):
			s.file = strings.TrimPrefix(attr, "file=")
		default:
			t.Fatalf("README.md:%d: unknown block marker %q (want run or file=<path>)", n, attr)
		}
		cur = &s
		body.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("README.md:%d: block not closed", cur.line)
	}
	return steps
}

// goEnv returns the value of a go env variable of the parent's.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// TestReadmeFiveMinutes follows README.md's "A new operator in five
// minutes" in a new module: go mod init, require and replace Lariat with
// this checkout and pin its generator as a tool, write the types, go
// generate, write the operator and its test, go build and go test (which
// starts the bundled control plane). The only network it needs is the Go
// module proxy, for modules not in the module cache; with the parent's
// module and build caches warm it takes about a minute.
func TestReadmeFiveMinutes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests a module of its own")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	steps := readmeSteps(t, filepath.Join(root, "README.md"))
	var files, runs int
	for _, s := range steps {
		if s.file != "" {
			files++
		} else {
			runs++
		}
	}
	if files < 4 || runs < 3 {
		t.Fatalf("README.md has %d file blocks and %d run blocks; the five-minute path has lost its markers", files, runs)
	}

	dir := t.TempDir()
	env := append(os.Environ(),
		// Modules come from the module cache or the proxy, and go.mod
		// may be updated by any command, as in a new module.
		"GOFLAGS=-mod=mod", "GOWORK=off",
		"GOMODCACHE="+goEnv(t, "GOMODCACHE"), "GOCACHE="+goEnv(t, "GOCACHE"),
		"LARIAT="+root,
	)
	for _, s := range steps {
		if s.file != "" {
			path := filepath.Join(dir, filepath.FromSlash(s.file))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(s.content), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for _, c := range s.commands {
			args := strings.Fields(os.Expand(c, func(name string) string {
				if name != "LARIAT" {
					t.Fatalf("README.md:%d: %q uses $%s; only $LARIAT is known", s.line, c, name)
				}
				return root
			}))
			if args[0] != "go" {
				t.Fatalf("README.md:%d: %q is not a go command", s.line, c)
			}
			start := time.Now()
			cmd := exec.CommandContext(t.Context(), "go", args[1:]...)
			cmd.Dir, cmd.Env = dir, env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("README.md:%d: %s: %v\n%s", s.line, c, err, out)
			}
			if args[1] == "test" && !strings.Contains(string(out), "ok  \texample.com/greeter\t") {
				t.Fatalf("README.md:%d: %s ran no test:\n%s", s.line, c, out)
			}
			t.Logf("%s (%s)", c, time.Since(start).Round(time.Millisecond))
		}
	}

	// The generator is pinned in go.mod, and stays there after tidy.
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gomod), "tool github.com/lariat-dev/lariat/codegen") {
		t.Errorf("go.mod has no tool directive for the generator:\n%s", gomod)
	}
}
