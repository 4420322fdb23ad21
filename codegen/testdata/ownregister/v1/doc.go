// Package v1 declares its own scheme registration, which the generator
// must detect and leave alone.
//
// +kubebuilder:object:generate=true
// +groupName=own.lariat.dev
package v1
