// +kubebuilder:object:generate=true
// +groupName=bad.lariat.dev
// +kubebuilder:rbac:groups=bad.lariat.dev,resources=widgets,verbs=get
// +k8s:openapi-gen=true
package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// +genclient
// +genclient:nonNamespace
// +kubebuilder:object:root=true
// +kubebuilder:printcolum:name="Size",type=integer,JSONPath=".spec.size"
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:Minimun=1
	// +kubebulder:validation:Maximum=10
	// +optional
	Size int32 `json:"size,omitempty"`
}

// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}
