// Package genericcondition is wrangler's
// github.com/rancher/wrangler/v3/pkg/genericcondition under Lariat's module
// path: the same GenericCondition type with the same JSON, so that a port
// changes only the import path and the conditions already stored in its
// CRDs' statuses read the same. Shape connects it to the helpers of
// pkg/condition (Set, Do, DoUntilTrue, CreateUnknownIfNotExists,
// LastUpdateTime), which replace wrangler's reflection-based cond methods.
package genericcondition

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/lariat-dev/lariat/pkg/condition"
)

// GenericCondition is one condition of a status, field for field and tag
// for tag as wrangler declares it: times are RFC 3339 strings, and there is
// no observed generation.
type GenericCondition struct {
	// Type of cluster condition.
	Type string `json:"type"`
	// Status of the condition, one of True, False, Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// The last time this condition was updated.
	LastUpdateTime string `json:"lastUpdateTime,omitempty"`
	// Last time the condition transitioned from one status to another.
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	// The reason for the condition's last transition.
	Reason string `json:"reason,omitempty"`
	// Human-readable message indicating details about last transition
	Message string `json:"message,omitempty"`
}

// DeepCopyInto copies in into out. Every field is a value, so a plain
// assignment is a deep copy; it is written by hand because Lariat's
// generator writes deepcopy only for API packages (those with a
// +groupName), and deepcopy-gen and controller-gen, run over an operator's
// types that hold []GenericCondition, call it.
func (in *GenericCondition) DeepCopyInto(out *GenericCondition) {
	*out = *in
}

// DeepCopy returns a copy of in, nil for nil, as generated deepcopy does.
func (in *GenericCondition) DeepCopy() *GenericCondition {
	if in == nil {
		return nil
	}
	out := new(GenericCondition)
	in.DeepCopyInto(out)
	return out
}

// Shape returns the condition.Shape of GenericCondition, for the helpers of
// pkg/condition: genericcondition.Shape().Do(&obj.Status.Conditions,
// "Ready", obj.Generation, reason, f). It is a function rather than a
// variable so that no caller can change it for the others.
func Shape() condition.Shape[GenericCondition] {
	return condition.Shape[GenericCondition]{
		Get: func(c *GenericCondition) condition.Fields {
			return condition.Fields{
				Type:               c.Type,
				Status:             string(c.Status),
				Reason:             c.Reason,
				Message:            c.Message,
				LastTransitionTime: condition.TimeFromString(c.LastTransitionTime),
				LastUpdateTime:     condition.TimeFromString(c.LastUpdateTime),
			}
		},
		Put: func(c *GenericCondition, f condition.Fields) {
			c.Type = f.Type
			c.Status = corev1.ConditionStatus(f.Status)
			c.Reason = f.Reason
			c.Message = f.Message
			condition.SetTimeString(&c.LastTransitionTime, f.LastTransitionTime)
			condition.SetTimeString(&c.LastUpdateTime, f.LastUpdateTime)
		},
	}
}
