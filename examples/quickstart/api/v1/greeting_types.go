package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// GreetingSpec is the desired state of a Greeting.
type GreetingSpec struct {
	// Message is the text put into the Greeting's ConfigMap.
	// +kubebuilder:validation:MinLength=1
	Message string `json:"message"`
	// Replicas tells the ConfigMap's readers how many copies to run.
	// +kubebuilder:default=1
	Replicas *int32 `json:"replicas,omitempty"`
}

// GreetingStatus is the observed state of a Greeting.
type GreetingStatus struct {
	// ObservedGeneration is the generation this status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions describe the Greeting's state; Ready is the summary.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ConfigMap names the ConfigMap holding the message.
	ConfigMap string `json:"configMap,omitempty"`
}

// Greeting asks the operator for a ConfigMap holding its message.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type Greeting struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GreetingSpec   `json:"spec"`
	Status            GreetingStatus `json:"status,omitempty"`
}

// GreetingList is a list of Greetings.
//
// +kubebuilder:object:root=true
type GreetingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Greeting `json:"items"`
}
