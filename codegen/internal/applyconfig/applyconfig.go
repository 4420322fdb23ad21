// Package applyconfig generates server-side apply configurations for API
// packages with k8s.io/code-generator's applyconfiguration-gen, used as a
// library, so that typed controllers' Apply works for custom kinds as it
// does for built-in ones.
package applyconfig

import (
	"fmt"
	"os"

	"k8s.io/code-generator/cmd/applyconfiguration-gen/args"
	"k8s.io/code-generator/cmd/applyconfiguration-gen/generators"
	"k8s.io/gengo/v2"
	"k8s.io/gengo/v2/generator"
)

// Options say what to generate and where.
type Options struct {
	// Dir is the module directory the packages are loaded from.
	Dir string
	// Packages are the import paths of the API packages.
	Packages []string
	// OutputDir and OutputPkg are the directory and import path of the
	// generated apply configurations.
	OutputDir, OutputPkg string
	// HeaderFile is the boilerplate put at the top of each file; "" means
	// none.
	HeaderFile string
}

// Generate writes the apply configurations. gengo resolves packages from
// the process's working directory only, so Generate changes into opts.Dir
// for the duration of the call: it must not run concurrently with anything
// that depends on the working directory.
func Generate(opts Options) (err error) {
	a := args.New()
	a.OutputDir, a.OutputPkg = opts.OutputDir, opts.OutputPkg
	a.GoHeaderFile = opts.HeaderFile
	if a.GoHeaderFile == "" {
		// gengo reads the header from a file; an empty one means none.
		empty, err := os.CreateTemp("", "lariat-header-")
		if err != nil {
			return err
		}
		empty.Close()
		defer os.Remove(empty.Name())
		a.GoHeaderFile = empty.Name()
	}
	if err := a.Validate(); err != nil {
		return fmt.Errorf("apply configurations: %w", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := os.Chdir(opts.Dir); err != nil {
		return err
	}
	defer func() {
		if cdErr := os.Chdir(wd); cdErr != nil && err == nil {
			err = cdErr
		}
	}()
	targets := func(c *generator.Context) []generator.Target { return generators.GetTargets(c, a) }
	if err := gengo.Execute(generators.NameSystems(), generators.DefaultNameSystem(), targets, gengo.StdBuildTag, opts.Packages); err != nil {
		return fmt.Errorf("apply configurations: %w", err)
	}
	return nil
}
