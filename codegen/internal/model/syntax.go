package model

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strconv"
)

// RegisterFile is the name of the registration file the generator writes;
// declarations in it do not count as the package's own.
const RegisterFile = "zz_generated.register.go"

// isRegisterName reports whether name is declared by a registration file.
// A package that declares any of them itself gets no generated one.
func isRegisterName(name string) bool {
	switch name {
	case "GroupName", "SchemeGroupVersion", "SchemeBuilder", "AddToScheme", "Kind", "Resource":
		return true
	}
	return false
}

// embeds reports whether a struct type embeds a field whose type is a
// selector ending in name, such as metav1.ObjectMeta.
func embeds(spec *ast.TypeSpec, name string) bool {
	st, ok := spec.Type.(*ast.StructType)
	if !ok {
		return false
	}
	for _, field := range st.Fields.List {
		if len(field.Names) != 0 {
			continue
		}
		typ := field.Type
		if star, ok := typ.(*ast.StarExpr); ok {
			typ = star.X
		}
		if sel, ok := typ.(*ast.SelectorExpr); ok && sel.Sel.Name == name {
			return true
		}
	}
	return false
}

// ownDecls returns the positions of the registration declarations of a
// package outside the generated registration file, by name.
func ownDecls(files []*ast.File, fset *token.FileSet) map[string]token.Position {
	found := map[string]token.Position{}
	for _, f := range files {
		pos := fset.Position(f.Package)
		if filepath.Base(pos.Filename) == RegisterFile {
			continue
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && isRegisterName(d.Name.Name) {
					found[d.Name.Name] = fset.Position(d.Name.Pos())
				}
			case *ast.GenDecl:
				// Types count too: a type named Kind or Resource would
				// clash with the generated functions.
				for _, spec := range d.Specs {
					switch sp := spec.(type) {
					case *ast.ValueSpec:
						for _, id := range sp.Names {
							if isRegisterName(id.Name) {
								found[id.Name] = fset.Position(id.Pos())
							}
						}
					case *ast.TypeSpec:
						if isRegisterName(sp.Name.Name) {
							found[sp.Name.Name] = fset.Position(sp.Name.Pos())
						}
					}
				}
			}
		}
	}
	return found
}

// constString returns the value of a string constant declared in files, or
// "" when there is none.
func constString(files []*ast.File, name string) string {
	for _, f := range files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for i, id := range vs.Names {
					if id.Name != name || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if v, err := strconv.Unquote(lit.Value); err == nil {
							return v
						}
					}
				}
			}
		}
	}
	return ""
}
