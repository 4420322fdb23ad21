package model

import (
	"go/token"
	"testing"
)

func TestGroupNames(t *testing.T) {
	for _, tt := range []struct{ group, pkg, accessor string }{
		{"demo.lariat.dev", "demo", "Demo"},
		{"my-apps.example.com", "myapps", "Myapps"},
		{"3d.example.com", "group3d", "Group3d"},
	} {
		g := &Group{Name: tt.group}
		if got := g.PackageName(); got != tt.pkg {
			t.Errorf("%s: package %q, want %q", tt.group, got, tt.pkg)
		}
		if got := g.AccessorName(); got != tt.accessor {
			t.Errorf("%s: accessor %q, want %q", tt.group, got, tt.accessor)
		}
	}
}

func TestParsePos(t *testing.T) {
	for in, want := range map[string]token.Position{
		"/a/b.go:3:7": {Filename: "/a/b.go", Line: 3, Column: 7},
		"/a/b.go:3":   {Filename: "/a/b.go", Line: 3},
		"c:/x.go:1:2": {Filename: "c:/x.go", Line: 1, Column: 2},
		"pkg:-":       {Filename: "pkg:-"},
	} {
		if got := parsePos(in); got != want {
			t.Errorf("parsePos(%q) = %+v, want %+v", in, got, want)
		}
	}
}

func TestErrorsSortedAndRelative(t *testing.T) {
	l := &errorList{base: "/m"}
	l.add(token.Position{Filename: "/m/b.go", Line: 1, Column: 1}, "second")
	l.add(token.Position{Filename: "/m/a.go", Line: 9, Column: 1}, "first")
	l.add(token.Position{Filename: "/elsewhere/c.go", Line: 1, Column: 1}, "outside %d", 3)
	want := "/elsewhere/c.go:1:1: outside 3\na.go:9:1: first\nb.go:1:1: second"
	if got := l.err().Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
