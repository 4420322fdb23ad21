// Command codegen is Lariat's code generator, run by go generate in an
// operator's module:
//
//	//go:generate go run github.com/lariat-dev/lariat/codegen -paths ./api/... -output ./generated -crd-dir ./crds
//
// For API packages with kubebuilder markers it writes deepcopy methods
// (zz_generated.deepcopy.go) and, unless the package declares its own,
// scheme registration (zz_generated.register.go) into each API package,
// CRD manifests into the CRD directory, and typed controllers, clients,
// caches and group factories over github.com/lariat-dev/lariat/pkg/generic
// into <output>/controllers/<group>/<version>, and apply configurations for
// every kind into <output>/applyconfiguration. Output is deterministic, only
// changed files are written, and generated files of an earlier run that
// this one does not produce are deleted. Problems with the input, all of a
// run's, are reported as file:line:col: message, and then nothing is
// written.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "codegen:", err)
		os.Exit(1)
	}
}
