package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestEveryExportedNameHasADocComment: every package under pkg/ has a
// package comment, and every exported name go doc shows (functions,
// types, constants, variables, and the methods of exported types) has a
// doc comment of its own or, in a parenthesized group, the group's.
// Generated files are left out: they are regenerated, not edited.
func TestEveryExportedNameHasADocComment(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", "pkg"))
	if err != nil {
		t.Fatal(err)
	}
	missing, packages := undocumented(t, root)
	if packages == 0 {
		t.Fatal("no packages found under pkg/")
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("no doc comment: %s", m)
	}
}

// undocumented returns what lacks a doc comment under root, as
// "path:line: name", and how many packages it read.
func undocumented(t *testing.T, root string) ([]string, int) {
	t.Helper()
	fset := token.NewFileSet()
	type pkgKey struct{ dir, name string }
	hasDoc := map[pkgKey]bool{}
	var missing []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, err := filepath.Rel(filepath.Dir(root), path)
		if err != nil {
			return err
		}
		k := pkgKey{filepath.Dir(path), f.Name.Name}
		hasDoc[k] = hasDoc[k] || f.Doc != nil
		for _, name := range undocumentedIn(fset, f) {
			missing = append(missing, rel+":"+name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, ok := range hasDoc {
		if !ok {
			rel, _ := filepath.Rel(filepath.Dir(root), k.dir)
			missing = append(missing, rel+": package "+k.name+" (no package comment)")
		}
	}
	return missing, len(hasDoc)
}

// undocumentedIn names the exported declarations of f without a doc
// comment, each as "line: name".
func undocumentedIn(fset *token.FileSet, f *ast.File) []string {
	var out []string
	at := func(pos token.Pos, name string) string {
		return strconv.Itoa(fset.Position(pos).Line) + ": " + name
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			if d.Recv != nil {
				recv := receiverType(d.Recv.List[0].Type)
				if !ast.IsExported(recv) {
					continue // not shown by go doc
				}
				out = append(out, at(d.Pos(), recv+"."+d.Name.Name))
				continue
			}
			out = append(out, at(d.Pos(), d.Name.Name))
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			grouped := d.Lparen.IsValid() && d.Doc != nil
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
						out = append(out, at(s.Pos(), s.Name.Name))
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && s.Doc == nil && s.Comment == nil && !grouped && d.Doc == nil {
							out = append(out, at(n.Pos(), n.Name))
						}
					}
				}
			}
		}
	}
	return out
}

// receiverType returns the name of a method's receiver type.
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
