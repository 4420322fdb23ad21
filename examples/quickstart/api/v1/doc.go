// Package v1 is the quickstart.lariat.dev/v1 API: the Greeting kind, from
// which go generate makes deepcopy, registration, the CRD and controllers.
//
// +kubebuilder:object:generate=true
// +groupName=quickstart.lariat.dev
package v1
