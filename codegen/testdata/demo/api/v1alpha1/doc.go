// Package v1alpha1 is a second version of the demo.lariat.dev API group,
// so the golden tests cover a group with several versions.
//
// +kubebuilder:object:generate=true
// +groupName=demo.lariat.dev
package v1alpha1
