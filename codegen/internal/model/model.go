package model

import (
	"go/token"
	"strings"
	"unicode"
)

// Group is an API group with the versions declared for it.
type Group struct {
	// Name is the API group, for example "demo.lariat.dev".
	Name string
	// Versions are sorted by name.
	Versions []*Version
}

// PackageName is the Go package name of the group's generated
// controllers: the group's first DNS label, as in wrangler.
func (g *Group) PackageName() string {
	if g.Name == "" {
		return "core" // the core group has no name; client-go calls it core
	}
	label, _, _ := strings.Cut(g.Name, ".")
	var b strings.Builder
	for _, r := range strings.ToLower(label) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		}
	}
	name := b.String()
	if name == "" || unicode.IsDigit(rune(name[0])) {
		// A package name must start with a letter.
		name = "group" + name
	}
	return name
}

// DirName is the directory of the group's generated controllers: its name,
// or "core" for the core group.
func (g *Group) DirName() string {
	if g.Name == "" {
		return "core"
	}
	return g.Name
}

// AccessorName is the name of the group factory's method that returns the
// group, for example "Demo".
func (g *Group) AccessorName() string {
	name := g.PackageName()
	return strings.ToUpper(name[:1]) + name[1:]
}

// Version is one API package: a group version and its kinds.
type Version struct {
	// Group is the API group the version belongs to.
	Group string
	// Name is the version, for example "v1".
	Name string
	// PkgPath is the import path of the API package.
	PkgPath string
	// PkgName is the Go package name of the API package.
	PkgName string
	// Dir is the API package's directory.
	Dir string
	// Kinds are sorted by name.
	Kinds []*Kind
	// GenerateRegister is false when the package declares its own
	// SchemeGroupVersion and AddToScheme.
	GenerateRegister bool
	// Pos is where the package clause of the version's first file is.
	Pos token.Position
}

// Kind is a root type with a list type: one Kubernetes kind.
type Kind struct {
	// Name is the kind and the Go type name, for example "WebApp".
	Name string
	// ListName is the Go type name of its list, for example "WebAppList".
	ListName string
	// Namespaced is false for cluster-scoped kinds.
	Namespaced bool
	// HasStatus is true when the status subresource is enabled.
	HasStatus bool
	// Status describes the type of the kind's Status field; it is nil when
	// the kind has none or it is not a struct of the same package.
	Status *StatusType
	// Storage is true when the kind is marked +kubebuilder:storageversion
	// in this version: the version the API server stores it in.
	Storage bool
	// Unserved is true when the kind is marked +kubebuilder:unservedversion
	// in this version.
	Unserved bool
	// Resource is the plural resource name; it is filled in from the
	// generated CRD so that controllers and manifests cannot disagree.
	Resource string
	// Pos is where the type is declared.
	Pos token.Position
}

// StatusType is the struct type of a kind's Status field, as far as the
// generated status and generating handlers need to know it.
type StatusType struct {
	// Name is the Go type name, for example "WebAppStatus".
	Name string
	// Conditions is true when it has a Conditions []metav1.Condition field.
	Conditions bool
	// ConditionShape describes the element type of a Conditions field that
	// is a slice of another condition struct type; nil otherwise.
	ConditionShape *ConditionShape
	// ObservedGeneration is true when it has an ObservedGeneration int64
	// field.
	ObservedGeneration bool
}
