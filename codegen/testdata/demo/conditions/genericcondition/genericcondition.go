// Package genericcondition has the shape of wrangler's
// github.com/rancher/wrangler/v3/pkg/genericcondition, declared here so the
// tests need not depend on wrangler: string times, no observed generation,
// Status of corev1's string kind.
package genericcondition

import v1 "k8s.io/api/core/v1"

// GenericCondition is one condition of a status, as wrangler declares it.
type GenericCondition struct {
	// Type of cluster condition.
	Type string `json:"type"`
	// Status of the condition, one of True, False, Unknown.
	Status v1.ConditionStatus `json:"status"`
	// The last time this condition was updated.
	LastUpdateTime string `json:"lastUpdateTime,omitempty"`
	// Last time the condition transitioned from one status to another.
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	// The reason for the condition's last transition.
	Reason string `json:"reason,omitempty"`
	// Human-readable message indicating details about last transition
	Message string `json:"message,omitempty"`
}
