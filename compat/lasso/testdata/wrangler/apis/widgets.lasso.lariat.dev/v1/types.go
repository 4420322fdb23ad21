package v1

import (
	"github.com/rancher/wrangler/v3/pkg/genericcondition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Widget is a namespaced kind with a status subresource.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec"`
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is what the user asks for.
type WidgetSpec struct {
	Size  int32  `json:"size"`
	Color string `json:"color,omitempty"`
}

// WidgetStatus is what the handler records, with wrangler's conditions.
type WidgetStatus struct {
	ObservedSize int32                               `json:"observedSize,omitempty"`
	Conditions   []genericcondition.GenericCondition `json:"conditions,omitempty"`
}
