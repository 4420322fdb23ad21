package model

import (
	"go/token"
	"go/types"

	"sigs.k8s.io/controller-tools/pkg/loader"
)

// metav1Path is the package of metav1.Condition and metav1.Time.
const metav1Path = "k8s.io/apimachinery/pkg/apis/meta/v1"

// ConditionShape is a condition struct type other than metav1.Condition,
// whose fields the generated code reads and writes through a
// condition.Shape.
type ConditionShape struct {
	// PkgPath and Name identify the type; PkgName is its package's name.
	PkgPath, PkgName, Name string
	// Local is true when the type is declared in the API package itself.
	Local bool
	// Fields are the fields of condition.Fields the type has.
	Fields []ConditionField
}

// ConditionField is one field of a condition type that maps to the field
// of condition.Fields of the same name.
type ConditionField struct {
	// Name is the field's name: Type, Status, Reason, Message,
	// ObservedGeneration, LastTransitionTime or LastUpdateTime.
	Name string
	// Kind says how it is converted: "string" (any string kind), "time"
	// (metav1.Time), "timestring" (an RFC 3339 string) or "int64".
	Kind string
}

// statusType reads the Status field of kind name with its real types
// (go/types, not names, so that a type merely called Condition is not
// taken for metav1's): the struct type it has, and how the handlers set
// its conditions and observed generation. Conditions it cannot set are
// reported as an error at the Conditions field, unless lenient (external
// packages, which the user cannot change: their conditions are then not
// set).
func statusType(pkg *loader.Package, fset *token.FileSet, name string, errs *errorList, lenient bool) *StatusType {
	// The type checker loads the imported packages first, which
	// NeedTypesInfo alone does not.
	(&loader.TypeChecker{}).Check(pkg)
	if pkg.Types == nil {
		return nil
	}
	obj, ok := pkg.Types.Scope().Lookup(name).(*types.TypeName)
	if !ok {
		return nil
	}
	kind, ok := obj.Type().Underlying().(*types.Struct)
	if !ok {
		return nil
	}
	statusField := field(kind, "Status")
	if statusField == nil {
		return nil
	}
	named, ok := statusField.Type().(*types.Named)
	if !ok || named.Obj().Pkg() != pkg.Types {
		return nil // a pointer or another package's type: not handled
	}
	st, ok := named.Underlying().(*types.Struct)
	if !ok {
		return nil
	}
	t := &StatusType{Name: named.Obj().Name()}
	if f := field(st, "ObservedGeneration"); f != nil && types.Identical(f.Type(), types.Typ[types.Int64]) {
		t.ObservedGeneration = true
	}
	f := field(st, "Conditions")
	if f == nil {
		return t
	}
	if isInvalid(f.Type()) {
		return t // a type error the CRD generator reports
	}
	elem, ok := sliceOfNamed(f.Type())
	switch {
	case ok && elem.Obj().Pkg() != nil && elem.Obj().Pkg().Path() == metav1Path && elem.Obj().Name() == "Condition":
		t.Conditions = true
	case ok:
		shape, problem := conditionShape(elem, pkg.Types)
		if problem == "" {
			t.ConditionShape = shape
		} else if !lenient {
			errs.add(fset.Position(f.Pos()), "%s.Conditions is %s, whose conditions the status and generating handlers cannot set: %s; "+
				"use []metav1.Condition or a struct with Type, Status, Reason and Message fields of string kinds (and optionally "+
				"LastTransitionTime and LastUpdateTime as metav1.Time or RFC 3339 strings, ObservedGeneration int64), such as wrangler's genericcondition.GenericCondition",
				t.Name, typeString(f.Type(), pkg.Types), problem)
		}
	case !lenient:
		errs.add(fset.Position(f.Pos()), "%s.Conditions is %s, whose conditions the status and generating handlers cannot set: "+
			"use []metav1.Condition or a slice of a struct with Type, Status, Reason and Message fields of string kinds, such as wrangler's genericcondition.GenericCondition",
			t.Name, typeString(f.Type(), pkg.Types))
	}
	return t
}

// conditionShape checks a condition struct type and says how its fields
// map to condition.Fields, or what is wrong with it.
func conditionShape(elem *types.Named, apiPkg *types.Package) (*ConditionShape, string) {
	st, ok := elem.Underlying().(*types.Struct)
	if !ok {
		return nil, "its elements are not structs"
	}
	if !elem.Obj().Exported() {
		return nil, "its element type is not exported, so generated code cannot name it"
	}
	if elem.TypeParams().Len() > 0 {
		return nil, "its element type is generic"
	}
	shape := &ConditionShape{
		PkgPath: elem.Obj().Pkg().Path(),
		PkgName: elem.Obj().Pkg().Name(),
		Name:    elem.Obj().Name(),
		Local:   elem.Obj().Pkg() == apiPkg,
	}
	for _, name := range []string{"Type", "Status", "Reason", "Message"} {
		f := field(st, name)
		if f == nil {
			return nil, "its element type has no " + name + " field"
		}
		if !isStringKind(f.Type()) {
			return nil, "its " + name + " field is not of a string kind"
		}
		shape.Fields = append(shape.Fields, ConditionField{Name: name, Kind: "string"})
	}
	if f := field(st, "ObservedGeneration"); f != nil && types.Identical(f.Type(), types.Typ[types.Int64]) {
		shape.Fields = append(shape.Fields, ConditionField{Name: "ObservedGeneration", Kind: "int64"})
	}
	for _, name := range []string{"LastTransitionTime", "LastUpdateTime"} {
		f := field(st, name)
		switch {
		case f == nil:
		case isMetav1Time(f.Type()):
			shape.Fields = append(shape.Fields, ConditionField{Name: name, Kind: "time"})
		case isStringKind(f.Type()):
			shape.Fields = append(shape.Fields, ConditionField{Name: name, Kind: "timestring"})
		default:
			return nil, "its " + name + " field is neither a metav1.Time nor a string"
		}
	}
	return shape, ""
}

// field returns the struct's field of that name (not embedded ones).
func field(st *types.Struct, name string) *types.Var {
	for i := range st.NumFields() {
		if f := st.Field(i); f.Name() == name && !f.Embedded() {
			return f
		}
	}
	return nil
}

func sliceOfNamed(t types.Type) (*types.Named, bool) {
	s, ok := t.(*types.Slice)
	if !ok {
		return nil, false
	}
	n, ok := s.Elem().(*types.Named)
	return n, ok
}

func isStringKind(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Kind() == types.String
}

func isMetav1Time(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == metav1Path && n.Obj().Name() == "Time"
}

func isInvalid(t types.Type) bool {
	if s, ok := t.(*types.Slice); ok {
		t = s.Elem()
	}
	b, ok := t.(*types.Basic)
	return ok && b.Kind() == types.Invalid
}

// typeString prints t with package names, as the user wrote it.
func typeString(t types.Type, local *types.Package) string {
	return types.TypeString(t, func(p *types.Package) string {
		if p == local {
			return ""
		}
		return p.Name()
	})
}
