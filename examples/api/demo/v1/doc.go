// Package v1 is the v1 version of the demo.lariat.dev API group: the custom
// resources of Lariat's example operators. `make generate` turns it into
// deepcopy and registration code here, CRDs in crds/, and typed controllers
// in generated/controllers/demo.lariat.dev.
//
// +kubebuilder:object:generate=true
// +groupName=demo.lariat.dev
package v1
