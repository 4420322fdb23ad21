// Package generated holds the output of Lariat's code generator for this
// repository's own API groups (the example operators' demo.lariat.dev);
// `make generate` (go generate ./...) rewrites it. Never edit it by hand.
package generated

//go:generate go run ../codegen -C .. -paths ./examples/api/... -output ./generated -crd-dir ./crds -header scripts/boilerplate.go.txt
