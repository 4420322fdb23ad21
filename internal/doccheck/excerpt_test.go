package doccheck

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// excerptMarker, on the line before a fenced block of a Markdown page,
// says the block is an excerpt of the named file (relative to the
// repository): its lines, each trimmed of indentation, are runs of
// consecutive lines of that file, in the file's order; a line "// ..."
// stands for lines left out.
const excerptMarker = "<!-- excerpt: "

// elision is the snippet line that stands for lines left out.
const elision = "// ..."

// excerpt is one marked block.
type excerpt struct {
	page string
	line int    // of the marker
	file string // relative to the repository
	body []string
}

// pageExcerpts returns the marked blocks of a Markdown page.
func pageExcerpts(t *testing.T, page string) []excerpt {
	t.Helper()
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out  []excerpt
		cur  *excerpt
		open bool // inside cur's fence
		n    int
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := sc.Text()
		// Markers and fences may be indented, inside a list item.
		bare := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(bare, excerptMarker):
			file := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(bare, excerptMarker), "-->"))
			cur = &excerpt{page: page, line: n, file: file}
		case cur != nil && !open:
			if !strings.HasPrefix(bare, "```") {
				t.Fatalf("%s:%d: the excerpt marker is not followed by a fenced block", page, cur.line)
			}
			open = true
		case cur != nil && strings.HasPrefix(bare, "```"):
			out = append(out, *cur)
			cur, open = nil, false
		case cur != nil:
			cur.body = append(cur.body, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: excerpt block not closed", page, cur.line)
	}
	return out
}

// matchExcerpt reports why snippet is not an excerpt of source, or "".
func matchExcerpt(snippet, source []string) string {
	trim := func(lines []string) []string {
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = strings.TrimSpace(l)
		}
		return out
	}
	src := trim(source)
	var runs [][]string
	run := []string{}
	for _, l := range trim(snippet) {
		if l == elision {
			if len(run) > 0 {
				runs = append(runs, run)
			}
			run = []string{}
			continue
		}
		run = append(run, l)
	}
	if len(run) > 0 {
		runs = append(runs, run)
	}
	from := 0
	for _, r := range runs {
		at := -1
		for i := from; i+len(r) <= len(src); i++ {
			if equal(src[i:i+len(r)], r) {
				at = i
				break
			}
		}
		if at < 0 {
			return fmt.Sprintf("these lines are not, in this order, lines of the file after its line %d:\n%s", from, strings.Join(r, "\n"))
		}
		from = at + len(r)
	}
	return ""
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// TestDocsExcerptsAreCode: every block of README.md and docs/*.md marked
// as an excerpt is one of the file it names, so docs that quote compiled,
// tested code cannot drift from it.
func TestDocsExcerptsAreCode(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"))
	count := 0
	for _, page := range pages {
		for _, e := range pageExcerpts(t, page) {
			count++
			data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.file)))
			if err != nil {
				t.Errorf("%s:%d: %v", e.page, e.line, err)
				continue
			}
			if why := matchExcerpt(e.body, strings.Split(string(data), "\n")); why != "" {
				t.Errorf("%s:%d: not an excerpt of %s: %s", e.page, e.line, e.file, why)
			}
		}
	}
	if count == 0 {
		t.Fatal("no excerpt marker in the docs")
	}
}

// TestMatchExcerpt: what the check accepts and refuses.
func TestMatchExcerpt(t *testing.T) {
	source := strings.Split("func f() {\n\ta()\n\tb()\n\tc()\n}", "\n")
	for _, c := range []struct {
		snippet string
		ok      bool
	}{
		{"a()\nb()", true},
		{"func f() {\n// ...\nc()\n}", true},
		{"a()\nc()", false},           // lines left out without "// ..."
		{"c()\n// ...\na()", false},   // out of order
		{"a()\nb(x)", false},          // changed
		{"func f() {\n    a()", true}, // indentation differs
	} {
		why := matchExcerpt(strings.Split(c.snippet, "\n"), source)
		if (why == "") != c.ok {
			t.Errorf("%q: accepted %v, want %v (%s)", c.snippet, why == "", c.ok, why)
		}
	}
}
