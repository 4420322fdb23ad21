package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"example.com/demo/conditions/genericcondition"
)

// TaskSpec is the desired state of a Task.
type TaskSpec struct {
	// Fail makes the status handler fail with this message.
	// +optional
	Fail string `json:"fail,omitempty"`
}

// TaskStatus has conditions of wrangler's shape, not metav1.Condition.
type TaskStatus struct {
	// Conditions describe the task's state.
	// +optional
	Conditions []genericcondition.GenericCondition `json:"conditions,omitempty"`
}

// Task is a kind whose status conditions have wrangler's generic shape.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type Task struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TaskSpec   `json:"spec,omitempty"`
	Status TaskStatus `json:"status,omitempty"`
}

// TaskList is a list of Tasks.
//
// +kubebuilder:object:root=true
type TaskList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Task `json:"items"`
}
