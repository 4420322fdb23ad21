package generator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"golang.org/x/mod/modfile"

	"github.com/lariat-dev/lariat/codegen/internal/render"
)

// controllersOutput returns where controllers go, with the import path the
// directory has in its module, which generated packages import each other
// by.
func controllersOutput(outputDir string) (render.Output, error) {
	dir := filepath.Join(outputDir, "controllers")
	for root := outputDir; ; {
		data, err := os.ReadFile(filepath.Join(root, "go.mod"))
		switch {
		case err == nil:
			modPath := modfile.ModulePath(data)
			if modPath == "" {
				return render.Output{}, fmt.Errorf("%s: no module path", filepath.Join(root, "go.mod"))
			}
			rel, err := filepath.Rel(root, dir)
			if err != nil {
				return render.Output{}, err
			}
			return render.Output{Dir: dir, ImportPath: path.Join(modPath, filepath.ToSlash(rel))}, nil
		case !errors.Is(err, fs.ErrNotExist):
			return render.Output{}, err
		}
		parent := filepath.Dir(root)
		if parent == root {
			return render.Output{}, fmt.Errorf("output directory %s is not inside a Go module", outputDir)
		}
		root = parent
	}
}
