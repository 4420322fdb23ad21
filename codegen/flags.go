package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/lariat-dev/lariat/codegen/internal/generator"
)

// pathList is a flag that may be repeated and takes comma-separated lists.
type pathList []string

func (p *pathList) String() string { return strings.Join(*p, ",") }

func (p *pathList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*p = append(*p, s)
		}
	}
	return nil
}

// parseFlags turns the command line into generator options.
func parseFlags(args []string, stderr io.Writer) (generator.Options, bool, error) {
	fs := flag.NewFlagSet("codegen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts generator.Options
	var paths pathList
	fs.Var(&paths, "paths", "API package patterns, comma-separated or repeated (default ./api/...)")
	fs.StringVar(&opts.Output, "output", "./generated", "directory of the generated controllers")
	fs.StringVar(&opts.CRDDir, "crd-dir", "./crds", "directory of the generated CRD manifests")
	fs.StringVar(&opts.HeaderFile, "header", "", "boilerplate file to put at the top of generated Go files")
	fs.StringVar(&opts.Dir, "C", "", "run as if started in this directory")
	fs.BoolVar(&opts.External, "external", false, "the API packages are someone else's (such as k8s.io/api/apps/v1): generate controllers only, from +genclient markers")
	verbose := fs.Bool("v", false, "list the files written")
	if err := fs.Parse(args); err != nil {
		return opts, false, err
	}
	if fs.NArg() > 0 {
		return opts, false, fmt.Errorf("unexpected arguments %q: pass API packages with -paths", fs.Args())
	}
	if len(paths) == 0 {
		paths = pathList{"./api/..."}
	}
	opts.Paths = paths
	if opts.Output == "" || opts.CRDDir == "" {
		return opts, false, errors.New("-output and -crd-dir must not be empty")
	}
	return opts, *verbose, nil
}

// run is main without the exit, for tests.
func run(args []string, stdout, stderr io.Writer) error {
	opts, verbose, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	changed, err := generator.Run(opts)
	if err != nil {
		return err
	}
	if verbose {
		for _, p := range changed {
			fmt.Fprintln(stdout, "wrote", p)
		}
	}
	return nil
}
