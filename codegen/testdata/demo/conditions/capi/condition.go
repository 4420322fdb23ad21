// Package capi has the shape of cluster-api's v1beta1 Condition: a type
// merely named Condition, from another package than metav1, with a field
// (Severity) the handlers do not set.
package capi

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionType is the type of a condition.
type ConditionType string

// Condition is one condition of a status, as cluster-api v1beta1 declares it.
type Condition struct {
	Type   ConditionType          `json:"type"`
	Status corev1.ConditionStatus `json:"status"`
	// +optional
	Severity string `json:"severity,omitempty"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// DeepCopyInto copies the condition into out, as cluster-api's generated
// deepcopy code does.
func (in *Condition) DeepCopyInto(out *Condition) {
	*out = *in
	in.LastTransitionTime.DeepCopyInto(&out.LastTransitionTime)
}
