package model

import (
	"cmp"
	"fmt"
	"go/token"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// Build reads the groups, versions and kinds of the root packages. Packages
// without root types and without a +groupName marker are skipped, so that
// a pattern like ./api/... may match helper packages. All problems found
// are returned together, with the groups of the packages that could be
// read, so that later stages can add their problems to the same report;
// base is the directory file names in errors are relative to; fset is the
// file set the packages were loaded with.
func Build(col *markers.Collector, roots []*loader.Package, fset *token.FileSet, base string) ([]*Group, error) {
	return build(col, roots, fset, base, false)
}

// BuildExternal reads API packages that are not the caller's own, such as
// k8s.io/api/apps/v1, for controllers only: kinds are the types with
// +genclient that can be listed and watched, scope and status come from the
// client-gen markers, and an empty +groupName is the core group. Types
// without a list type are skipped rather than reported.
func BuildExternal(col *markers.Collector, roots []*loader.Package, fset *token.FileSet, base string) ([]*Group, error) {
	return build(col, roots, fset, base, true)
}

func build(col *markers.Collector, roots []*loader.Package, fset *token.FileSet, base string, external bool) ([]*Group, error) {
	errs := &errorList{base: base}
	var versions []*Version
	for _, pkg := range roots {
		if !external {
			pkg.NeedSyntax()
			checkMarkerNames(col.Registry, pkg.Syntax, fset, errs)
		}
		if v := buildVersion(col, pkg, fset, errs, external); v != nil {
			versions = append(versions, v)
		}
	}
	groups := groupVersions(versions, errs)
	if !external {
		checkStorageVersions(groups, errs)
	}
	return groups, errs.err()
}

// buildVersion reads one API package, or returns nil when it declares no
// API types or is broken.
func buildVersion(col *markers.Collector, pkg *loader.Package, fset *token.FileSet, errs *errorList, external bool) *Version {
	pkg.NeedSyntax()
	if len(pkg.Syntax) == 0 {
		return nil
	}
	if !packageErrors(pkg, errs) {
		return nil
	}
	pkgMarkers, err := markers.PackageMarkers(col, pkg)
	if err != nil {
		markerErrors(pkg, fset, err, errs)
		return nil
	}
	v := &Version{
		Group:   groupName(pkgMarkers, pkg, external),
		Name:    cmp.Or(stringMarker(pkgMarkers, markerVersionName), pkg.Name),
		PkgPath: pkg.PkgPath,
		PkgName: pkg.Name,
		Dir:     filepath.Dir(fset.Position(pkg.Syntax[0].Package).Filename),
		Pos:     fset.Position(pkg.Syntax[0].Package),
	}
	lists := map[string]bool{}
	err = markers.EachType(col, pkg, func(info *markers.TypeInfo) {
		var k *Kind
		if external {
			k = externalKind(fset, info, lists)
		} else {
			k = buildKind(fset, info, lists, errs)
		}
		if k != nil {
			k.Status = statusType(pkg, fset, k.Name, errs, external)
			v.Kinds = append(v.Kinds, k)
		}
	})
	if err != nil {
		markerErrors(pkg, fset, err, errs)
		return nil
	}
	if len(v.Kinds) == 0 && len(lists) == 0 {
		return nil
	}
	if !token.IsIdentifier(v.Name) || strings.ToLower(v.Name) != v.Name {
		// The version names the generated controllers' Go package.
		errs.add(v.Pos, "version %q of package %s is not a lower-case Go identifier", v.Name, pkg.Name)
		return nil
	}
	if v.Group == "" && !external {
		errs.add(v.Pos, "package %s declares API types but has no +groupName=<group> marker (put it in doc.go, above the package clause)", pkg.Name)
		return nil
	}
	if external {
		// Kinds that cannot be listed cannot be watched by an informer.
		v.Kinds = slices.DeleteFunc(v.Kinds, func(k *Kind) bool { return !lists[k.ListName] })
		for _, k := range v.Kinds {
			k.HasStatus = k.HasStatus && k.Status != nil
		}
		slices.SortFunc(v.Kinds, func(a, b *Kind) int { return strings.Compare(a.Name, b.Name) })
		return v // external packages register themselves
	}
	for _, k := range v.Kinds {
		if !lists[k.ListName] {
			errs.add(k.Pos, "kind %s has no list type: declare %s with +kubebuilder:object:root=true, embedding metav1.ListMeta", k.Name, k.ListName)
		}
	}
	slices.SortFunc(v.Kinds, func(a, b *Kind) int { return strings.Compare(a.Name, b.Name) })
	v.GenerateRegister = checkRegister(pkg, fset, errs)
	return v
}

// buildKind reads one type: it returns the kind of a root type, records a
// list type in lists, and returns nil for other types.
func buildKind(fset *token.FileSet, info *markers.TypeInfo, lists map[string]bool, errs *errorList) *Kind {
	root := flag(info.Markers, markerRoot)
	genclient := has(info.Markers, markerGenclient)
	if !root && !genclient {
		return nil
	}
	pos := fset.Position(info.RawSpec.Name.Pos())
	if strings.HasSuffix(info.Name, "List") && embeds(info.RawSpec, "ListMeta") {
		lists[info.Name] = true
		return nil
	}
	if !embeds(info.RawSpec, "ObjectMeta") {
		errs.add(pos, "root type %s does not embed metav1.ObjectMeta", info.Name)
		return nil
	}
	if !root {
		// Without it neither DeepCopyObject nor a CRD is generated, so the
		// kind could not be registered or installed.
		errs.add(pos, "type %s has +genclient but not +kubebuilder:object:root=true", info.Name)
		return nil
	}
	k := &Kind{
		Name:       info.Name,
		ListName:   info.Name + "List",
		Namespaced: true,
		HasStatus:  info.Markers.Get(markerStatus) != nil,
		Storage:    has(info.Markers, markerStorageVersion),
		Unserved:   has(info.Markers, markerUnservedVersion),
		Pos:        pos,
	}
	var scope string
	if res, ok := info.Markers.Get(markerResource).(crdmarkers.Resource); ok {
		scope = res.Scope
	}
	switch scope {
	case "", "Namespaced":
	case "Cluster":
		k.Namespaced = false
	default:
		errs.add(pos, "type %s: unknown scope %q in +kubebuilder:resource (want Namespaced or Cluster)", info.Name, scope)
		return nil
	}
	if has(info.Markers, markerNonNamespaced) && k.Namespaced {
		// The CRD's scope comes from the kubebuilder marker alone; the two
		// must agree or the controller would not match the API server.
		errs.add(pos, "type %s has +genclient:nonNamespaced but its CRD would be namespaced: add +kubebuilder:resource:scope=Cluster", info.Name)
		return nil
	}
	return k
}

// groupName is the +groupName marker, or for external packages, whose
// markers often sit where controller-tools does not read package markers,
// the value of their GroupName constant.
func groupName(pkgMarkers markers.MarkerValues, pkg *loader.Package, external bool) string {
	if g := stringMarker(pkgMarkers, markerGroupName); g != "" || !external {
		return g
	}
	return constString(pkg.Syntax, "GroupName")
}

// externalKind reads one type of an external package: a kind when it has
// +genclient and its client can list and watch. List types are recorded in
// lists (client-gen packages mark them with no marker at all).
func externalKind(fset *token.FileSet, info *markers.TypeInfo, lists map[string]bool) *Kind {
	if strings.HasSuffix(info.Name, "List") && embeds(info.RawSpec, "ListMeta") {
		lists[info.Name] = true
		return nil
	}
	if !has(info.Markers, markerGenclient) || has(info.Markers, markerNoVerbs) || !embeds(info.RawSpec, "ObjectMeta") {
		return nil
	}
	if only, ok := info.Markers.Get(markerOnlyVerbs).(markers.RawArguments); ok {
		verbs := strings.Split(string(only), ",")
		if !slices.Contains(verbs, "list") || !slices.Contains(verbs, "watch") {
			return nil
		}
	}
	return &Kind{
		Name:       info.Name,
		ListName:   info.Name + "List",
		Namespaced: !has(info.Markers, markerNonNamespaced),
		HasStatus:  !has(info.Markers, markerNoStatus),
		Pos:        fset.Position(info.RawSpec.Name.Pos()),
	}
}

// checkRegister reports whether the registration file is to be generated,
// and checks that a package with its own registration declares what the
// generated controllers use.
func checkRegister(pkg *loader.Package, fset *token.FileSet, errs *errorList) bool {
	own := ownDecls(pkg.Syntax, fset)
	if len(own) == 0 {
		return true
	}
	for _, need := range []string{"SchemeGroupVersion", "AddToScheme"} {
		if _, ok := own[need]; ok {
			continue
		}
		names := make([]string, 0, len(own))
		for n := range own {
			names = append(names, n)
		}
		slices.Sort(names)
		errs.add(own[names[0]], "package %s declares %s but not %s, which generated controllers use: declare it, or remove %s to have %s generated",
			pkg.Name, strings.Join(names, ", "), need, strings.Join(names, ", "), RegisterFile)
	}
	return false
}

// packageErrors adds the package's load errors, except type errors, which
// are expected before the deepcopy methods exist; it reports whether there
// were none.
func packageErrors(pkg *loader.Package, errs *errorList) bool {
	ok := true
	for _, e := range pkg.Errors {
		if e.Kind == packages.TypeError {
			continue
		}
		ok = false
		errs.add(parsePos(e.Pos), "%s", e.Msg)
	}
	return ok
}

// markerErrors adds marker parse errors with their positions.
func markerErrors(pkg *loader.Package, fset *token.FileSet, err error, errs *errorList) {
	switch e := err.(type) {
	case loader.ErrList:
		// Lists nest: one per package, holding one per marker.
		for _, sub := range e {
			markerErrors(pkg, fset, sub, errs)
		}
	case loader.PositionedError:
		errs.add(fset.Position(e.Pos), "invalid marker: %v", e.Error())
	default:
		errs.add(token.Position{Filename: pkg.PkgPath}, "%v", e)
	}
}

// parsePos parses the "file:line:col" positions of go/packages errors.
func parsePos(s string) token.Position {
	var pos token.Position
	parts := strings.Split(s, ":")
	// Walk from the end, since file names may contain colons.
	nums := []*int{&pos.Column, &pos.Line}
	for len(parts) > 1 && len(nums) > 0 {
		var n int
		if _, err := fmt.Sscanf(parts[len(parts)-1], "%d", &n); err != nil {
			break
		}
		*nums[0] = n
		nums = nums[1:]
		parts = parts[:len(parts)-1]
	}
	if pos.Line == 0 && pos.Column != 0 {
		pos.Line, pos.Column = pos.Column, 0
	}
	pos.Filename = strings.Join(parts, ":")
	return pos
}
