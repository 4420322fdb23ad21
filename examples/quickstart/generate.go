package main

// Generates deepcopy and registration code in api/v1, the CRD in crds/, and
// the typed controllers and apply configurations in generated/.
//go:generate go run ../../codegen -C . -paths ./api/... -output ./generated -crd-dir ./crds -header ../../scripts/boilerplate.go.txt
