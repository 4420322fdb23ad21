package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WebAppSpec is the desired state of a WebApp.
type WebAppSpec struct {
	// Image is the container image to run.
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`
	// Replicas is the number of pods.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Config is configuration data rendered into the app's ConfigMap.
	// +optional
	Config map[string]string `json:"config,omitempty"`
	// Port is the container port the app listens on and its Service
	// exposes.
	// +kubebuilder:default=8080
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`
	// DependsOn names other WebApps of the namespace that must be available
	// before this one is deployed.
	// +optional
	DependsOn []string `json:"dependsOn,omitempty"`
}

// WebAppStatus is the observed state of a WebApp.
type WebAppStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// NodePort is the node port allocated to the app's Service.
	// +optional
	NodePort int32 `json:"nodePort,omitempty"`
	// WaitingFor lists the dependencies that are not available yet.
	// +optional
	WaitingFor []string `json:"waitingFor,omitempty"`
	// Conditions describe the app's state; Ready is the summary.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// WebApp is a web application: a Deployment with its ConfigMap and Service,
// deployed once the WebApps it depends on are available.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=wa
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=".spec.image"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
type WebApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WebAppSpec   `json:"spec"`
	Status WebAppStatus `json:"status,omitempty"`
}

// WebAppList is a list of WebApps.
//
// +kubebuilder:object:root=true
type WebAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WebApp `json:"items"`
}
