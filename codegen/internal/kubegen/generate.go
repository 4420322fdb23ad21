package kubegen

import (
	"errors"
	"fmt"
	"go/token"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/packages"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/deepcopy"
	"sigs.k8s.io/controller-tools/pkg/genall"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"
	"sigs.k8s.io/yaml"

	"github.com/lariat-dev/lariat/codegen/internal/model"
)

// Options configure Generate.
type Options struct {
	// CRDDir is the directory CRD manifests are placed in.
	CRDDir string
	// HeaderFile, if set, is prepended to the deepcopy files.
	HeaderFile string
}

// Result is the generated deepcopy files and CRD manifests by path, and the
// plural resource name of each kind as its CRD declares it.
type Result struct {
	// Files are the deepcopy files and CRD manifests, by absolute path.
	Files map[string][]byte
	// Resources are the plural resource names, by group and kind.
	Resources map[schema.GroupKind]string
}

// Generate runs the deepcopy and CRD generators on roots.
func Generate(col *markers.Collector, roots []*loader.Package, opts Options) (*Result, error) {
	omitVersion := true // the tool version would make output differ between builds
	gens := genall.Generators{
		asGenerator(deepcopy.Generator{HeaderFile: opts.HeaderFile}),
		asGenerator(crd.Generator{OmitToolVersion: &omitVersion}),
	}
	out := &memoryOutput{dir: opts.CRDDir}
	ctx := genall.GenerationContext{
		Collector:  col,
		Roots:      roots,
		Checker:    &loader.TypeChecker{NodeFilters: gens.CheckFilters()},
		InputRule:  genall.InputFromFileSystem,
		OutputRule: out,
	}
	var errs []error
	for _, gen := range gens {
		if err := (*gen).Generate(&ctx); err != nil {
			errs = append(errs, err)
		}
	}
	for _, pkg := range roots {
		for _, e := range pkg.Errors {
			// Type errors are expected from partial type checking, as in
			// controller-gen; the rest are real.
			if e.Kind == packages.TypeError {
				continue
			}
			if checkedByModel(e.Msg) {
				continue
			}
			pos := model.ParsePos(e.Pos)
			if pos.Line == 0 {
				// Problems the CRD generator cannot place (it writes
				// "<package>:-") are put at the package clause.
				pos = packagePos(pkg)
			}
			errs = append(errs, &model.Error{Pos: pos, Msg: e.Msg})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	resources, err := readResources(out.files, opts.CRDDir)
	if err != nil {
		return nil, err
	}
	return &Result{Files: out.files, Resources: resources}, nil
}

func asGenerator(g genall.Generator) *genall.Generator { return &g }

// readResources reads the plural names back from the CRD manifests.
func readResources(files map[string][]byte, crdDir string) (map[schema.GroupKind]string, error) {
	resources := map[schema.GroupKind]string{}
	for path, data := range files {
		if filepath.Dir(path) != filepath.Clean(crdDir) || !strings.HasSuffix(path, ".yaml") {
			continue
		}
		var def apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &def); err != nil {
			return nil, fmt.Errorf("read back generated CRD %s: %w", path, err)
		}
		gk := schema.GroupKind{Group: def.Spec.Group, Kind: def.Spec.Names.Kind}
		resources[gk] = def.Spec.Names.Plural
	}
	return resources, nil
}

// checkedByModel reports whether a CRD generator problem is one the model
// checks across packages itself and reports at the type declarations; the
// CRD generator's copy names only a package.
func checkedByModel(msg string) bool {
	return strings.HasPrefix(msg, "CRD for ") &&
		(strings.HasSuffix(msg, " has no storage version") || strings.Contains(msg, " does not serve any version"))
}

// packagePos is where the package clause of pkg's first file is.
func packagePos(pkg *loader.Package) token.Position {
	if len(pkg.Syntax) == 0 || pkg.Fset == nil {
		return token.Position{Filename: pkg.PkgPath}
	}
	return pkg.Fset.Position(pkg.Syntax[0].Package)
}
