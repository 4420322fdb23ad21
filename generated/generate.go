// Package generated holds the output of Lariat's code generator: typed
// controllers for the built-in Kubernetes groups operators commonly touch,
// and for this repository's own API group (the example operators'
// demo.lariat.dev). `make generate` (go generate ./...) rewrites it. Never
// edit it by hand.
package generated

//go:generate go run ../codegen -C .. -paths ./examples/api/... -output ./generated -crd-dir ./crds -header scripts/boilerplate.go.txt

// The built-in groups an operator commonly touches; their API packages are
// client-go's, so only controllers are generated for them.
//go:generate go run ../codegen -C .. -external -output ./generated -header scripts/boilerplate.go.txt -paths k8s.io/api/core/v1,k8s.io/api/apps/v1,k8s.io/api/batch/v1,k8s.io/api/rbac/v1,k8s.io/api/networking/v1,k8s.io/api/coordination/v1,k8s.io/api/policy/v1,k8s.io/api/storage/v1,k8s.io/api/discovery/v1,k8s.io/api/autoscaling/v2,k8s.io/api/admissionregistration/v1,k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1
