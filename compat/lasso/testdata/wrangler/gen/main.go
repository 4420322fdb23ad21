// Command gen runs wrangler's own code generator (pkg/controller-gen) for
// the Widget kind of ../apis, writing wrangler's controllers into
// ../generated and deepcopy and registration into the types package. It is
// a module of its own so that the generator's requirements (k8s.io/gengo,
// code-generator) stay out of compat/lasso's go.mod. Run it with go
// generate in compat/lasso (see doc.go); its only argument is the
// directory of compat/lasso, where the types are loaded and the output
// written.
package main

import (
	"fmt"
	"os"

	controllergen "github.com/rancher/wrangler/v3/pkg/controller-gen"
	"github.com/rancher/wrangler/v3/pkg/controller-gen/args"
)

const module = "github.com/lariat-dev/lariat/compat/lasso"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen <compat/lasso directory>")
		os.Exit(2)
	}
	// wrangler's generator loads the types and writes its output
	// relative to the working directory, which must be compat/lasso's
	// module.
	if err := os.Chdir(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	controllergen.Run(args.Options{
		ImportPackage: module + "/testdata/wrangler/generated",
		OutputPackage: module + "/testdata/wrangler/generated",
		ModulePath:    module,
		Boilerplate:   "testdata/wrangler/gen/boilerplate.go.txt",
		Groups: map[string]args.Group{
			"widgets.lasso.lariat.dev": {
				Types: []any{args.Type{
					Version: "v1",
					Package: module + "/testdata/wrangler/apis/widgets.lasso.lariat.dev/v1",
					Name:    "Widget",
				}},
				GenerateTypes: true,
			},
		},
	})
}
