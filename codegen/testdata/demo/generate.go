// Package demo is an operator module's root, where go generate runs the
// Lariat generator over its API packages.
package demo

//go:generate go run github.com/lariat-dev/lariat/codegen -paths ./api/... -output ./generated -crd-dir ./crds -header hack_boilerplate.go.txt
