package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"example.com/demo/conditions/capi"
)

// ProbeSpec says what to probe.
type ProbeSpec struct {
	// URL is probed with GET requests.
	// +kubebuilder:validation:Pattern=`^https?://`
	URL string `json:"url"`
	// Interval between probes.
	// +kubebuilder:default="30s"
	// +optional
	Interval metav1.Duration `json:"interval,omitempty"`
}

// ProbeStatus has conditions of a type merely named Condition, of
// cluster-api's v1beta1 shape.
type ProbeStatus struct {
	// Conditions describe the probe's state.
	// +optional
	Conditions []capi.Condition `json:"conditions,omitempty"`
}

// Probe is a namespaced kind of an alpha version.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type Probe struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProbeSpec   `json:"spec,omitempty"`
	Status ProbeStatus `json:"status,omitempty"`
}

// ProbeList is a list of Probes.
//
// +kubebuilder:object:root=true
type ProbeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Probe `json:"items"`
}
