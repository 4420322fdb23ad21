// Package generator runs one generation: it loads the API packages, builds
// and checks the model, runs the controller-tools generators, renders the
// registration and controller code, and writes what changed. Nothing is
// written unless every step succeeded.
package generator

import (
	"errors"
	"fmt"
	"go/token"
	"os"
	"path"
	"path/filepath"

	"golang.org/x/tools/go/packages"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-tools/pkg/loader"

	"github.com/lariat-dev/lariat/codegen/internal/applyconfig"
	"github.com/lariat-dev/lariat/codegen/internal/files"
	"github.com/lariat-dev/lariat/codegen/internal/kubegen"
	"github.com/lariat-dev/lariat/codegen/internal/model"
	"github.com/lariat-dev/lariat/codegen/internal/render"
)

// Options configure Run. Relative paths are relative to Dir.
type Options struct {
	// Dir is the directory patterns and paths are relative to; "" means
	// the working directory.
	Dir string
	// Paths are the package patterns of the API packages, like ./api/...
	Paths []string
	// Output is the directory of the generated controllers; they go to
	// <Output>/controllers/<group>/<version>.
	Output string
	// CRDDir is the directory of the CRD manifests.
	CRDDir string
	// HeaderFile, if set, is a boilerplate file prepended to generated Go
	// files.
	HeaderFile string
	// External marks the API packages as someone else's, such as
	// k8s.io/api/apps/v1: only controllers are generated, from the
	// client-gen markers, with resource names guessed from the kinds.
	External bool
}

// Run generates everything and returns the paths of the files it changed.
func Run(opts Options) ([]string, error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	var header []byte
	if o.HeaderFile != "" {
		if header, err = os.ReadFile(o.HeaderFile); err != nil {
			return nil, fmt.Errorf("header file: %w", err)
		}
	}
	col, err := kubegen.NewCollector(model.RegisterMarkers)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	roots, err := loader.LoadRootsWithConfig(&packages.Config{Dir: o.Dir, Fset: fset}, o.Paths...)
	if err != nil {
		return nil, err
	}
	build := model.Build
	if o.External {
		build = model.BuildExternal
	}
	groups, err := build(col, roots, fset, o.Dir)
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("no API types (types with +kubebuilder:object:root=true, or +genclient with -external) in %v", o.Paths)
	}

	// After the input checks, which need no module around the output.
	out, err := controllersOutput(o.Output)
	if err != nil {
		return nil, err
	}
	set := files.Set{}
	if o.External {
		for _, g := range groups {
			guessResources(g)
			if err := addControllers(set, g, out, header); err != nil {
				return nil, err
			}
		}
		return set.Write()
	}
	kube, err := kubegen.Generate(col, apiPackages(roots, groups), kubegen.Options{
		CRDDir:     o.CRDDir,
		HeaderFile: o.HeaderFile,
		RelativeTo: func(name string) string { return model.RelativeTo(o.Dir, name) },
	})
	if err != nil {
		return nil, err
	}
	if err := set.Add(kube.Files); err != nil {
		return nil, err
	}
	for _, g := range groups {
		if err := fillResources(g, kube.Resources); err != nil {
			return nil, err
		}
		if err := addGroup(set, g, out, header); err != nil {
			return nil, err
		}
	}
	changed, err := set.Write()
	if err != nil {
		return nil, err
	}
	// Last, because gengo writes its files itself: by now the packages
	// compile (deepcopy and registration exist), which it needs.
	err = applyconfig.Generate(applyconfig.Options{
		Dir:        o.Dir,
		Packages:   apiPackagePaths(groups),
		OutputDir:  filepath.Join(o.Output, "applyconfiguration"),
		OutputPkg:  path.Join(path.Dir(out.ImportPath), "applyconfiguration"),
		HeaderFile: o.HeaderFile,
	})
	return changed, err
}

// apiPackagePaths returns the import paths of the groups' API packages.
func apiPackagePaths(groups []*model.Group) []string {
	var paths []string
	for _, g := range groups {
		for _, v := range g.Versions {
			paths = append(paths, v.PkgPath)
		}
	}
	return paths
}

// addGroup renders the registration files and controllers of a group.
func addGroup(set files.Set, g *model.Group, out render.Output, header []byte) error {
	for _, v := range g.Versions {
		path, content, err := render.Register(v, header)
		if err != nil {
			return err
		}
		if !v.GenerateRegister {
			// The package has its own registration now; an older
			// generated one would declare everything twice.
			content = nil
		}
		if err := set.Add(map[string][]byte{path: content}); err != nil {
			return err
		}
	}
	return addControllers(set, g, out, header)
}

// addControllers renders a group's controllers and deletes the ones an
// earlier run generated for kinds and versions that are gone.
func addControllers(set files.Set, g *model.Group, out render.Output, header []byte) error {
	controllers, err := render.Controllers(g, out, header)
	if err != nil {
		return err
	}
	if err := set.Add(controllers); err != nil {
		return err
	}
	return set.PruneStale(render.GroupDir(g, out), []byte(render.GeneratedMarker))
}

// guessResources names the resources of external kinds the way Kubernetes
// does for built-in kinds: lower case, plural by apimachinery's rules, with
// the one built-in exception to them.
func guessResources(g *model.Group) {
	for _, v := range g.Versions {
		for _, k := range v.Kinds {
			if k.Name == "Endpoints" {
				k.Resource = "endpoints"
				continue
			}
			gvr, _ := meta.UnsafeGuessKindToResource(schema.GroupVersionKind{Group: g.Name, Version: v.Name, Kind: k.Name})
			k.Resource = gvr.Resource
		}
	}
}

// fillResources takes each kind's resource name from its CRD.
func fillResources(g *model.Group, resources map[schema.GroupKind]string) error {
	var errs []error
	for _, v := range g.Versions {
		for _, k := range v.Kinds {
			k.Resource = resources[schema.GroupKind{Group: g.Name, Kind: k.Name}]
			if k.Resource == "" {
				errs = append(errs, &model.Error{Pos: k.Pos, Msg: fmt.Sprintf("no CRD was generated for kind %s", k.Name)})
			}
		}
	}
	return errors.Join(errs...)
}

// apiPackages returns the roots the model found API types in, so that the
// controller-tools generators leave other matched packages alone.
func apiPackages(roots []*loader.Package, groups []*model.Group) []*loader.Package {
	want := map[string]bool{}
	for _, g := range groups {
		for _, v := range g.Versions {
			want[v.PkgPath] = true
		}
	}
	var pkgs []*loader.Package
	for _, pkg := range roots {
		if want[pkg.PkgPath] {
			pkgs = append(pkgs, pkg)
		}
	}
	return pkgs
}

// resolve makes the paths absolute and fills in defaults.
func (o Options) resolve() (Options, error) {
	if o.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return o, err
		}
		o.Dir = wd
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return o, err
	}
	o.Dir = dir
	if len(o.Paths) == 0 {
		return o, errors.New("no API package paths given")
	}
	if o.Output == "" || o.CRDDir == "" {
		return o, errors.New("output and CRD directories must be set")
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	o.Output, o.CRDDir, o.HeaderFile = abs(o.Output), abs(o.CRDDir), abs(o.HeaderFile)
	return o, nil
}
