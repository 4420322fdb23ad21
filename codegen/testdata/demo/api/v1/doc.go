// Package v1 is the v1 version of the demo.lariat.dev API group, the input
// of the generator's golden tests.
//
// +kubebuilder:object:generate=true
// +groupName=demo.lariat.dev
package v1
