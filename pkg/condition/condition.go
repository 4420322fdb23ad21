// Package condition sets and reads the standard conditions of an object's
// status (metav1.Condition) by name, the way wrangler's condition package
// does, but typed: it works on a *[]metav1.Condition that the caller takes
// from the status, so a mistyped field is a compile error rather than a
// reflection failure at run time.
//
//	ready := condition.Cond("Ready")
//	ready.SetError(&app.Status.Conditions, app.Generation, "Deploying", err)
//	if ready.IsTrue(app.Status.Conditions) { ... }
//
// Setters change a condition only when its status, reason, message or
// observed generation differ, and move LastTransitionTime only when the
// status changes (both via apimachinery's meta.SetStatusCondition), so a
// status handler that sets the same condition again writes nothing new.
package condition

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cond is the type of a condition, such as "Ready" or "Available".
type Cond string

// Reasons used when the caller gives none: the API requires a non-empty
// reason, in CamelCase.
const (
	ReasonSucceeded = "Succeeded"
	ReasonFailed    = "Failed"
	ReasonUnknown   = "Unknown"
)

// Set sets the condition's status, reason and message for the object's
// generation, adding the condition if it is missing. It reports whether
// anything changed.
func (c Cond) Set(conds *[]metav1.Condition, status metav1.ConditionStatus, generation int64, reason, message string) bool {
	if reason == "" {
		switch status {
		case metav1.ConditionTrue:
			reason = ReasonSucceeded
		case metav1.ConditionFalse:
			reason = ReasonFailed
		default:
			reason = ReasonUnknown
		}
	}
	return meta.SetStatusCondition(conds, metav1.Condition{
		Type:               string(c),
		Status:             status,
		ObservedGeneration: generation,
		Reason:             reason,
		Message:            message,
	})
}

// True sets the condition to True.
func (c Cond) True(conds *[]metav1.Condition, generation int64, reason, message string) bool {
	return c.Set(conds, metav1.ConditionTrue, generation, reason, message)
}

// False sets the condition to False.
func (c Cond) False(conds *[]metav1.Condition, generation int64, reason, message string) bool {
	return c.Set(conds, metav1.ConditionFalse, generation, reason, message)
}

// Unknown sets the condition to Unknown.
func (c Cond) Unknown(conds *[]metav1.Condition, generation int64, reason, message string) bool {
	return c.Set(conds, metav1.ConditionUnknown, generation, reason, message)
}

// SetError sets the condition from the outcome of some work: True with an
// empty message when err is nil, False with err's message otherwise. reason
// applies to the failure; success uses ReasonSucceeded.
func (c Cond) SetError(conds *[]metav1.Condition, generation int64, reason string, err error) bool {
	if err == nil {
		return c.True(conds, generation, ReasonSucceeded, "")
	}
	return c.False(conds, generation, reason, err.Error())
}

// Get returns the condition, or nil when the object does not have it.
func (c Cond) Get(conds []metav1.Condition) *metav1.Condition {
	return meta.FindStatusCondition(conds, string(c))
}

// IsTrue reports whether the condition is present and True.
func (c Cond) IsTrue(conds []metav1.Condition) bool {
	return meta.IsStatusConditionTrue(conds, string(c))
}

// IsFalse reports whether the condition is present and False.
func (c Cond) IsFalse(conds []metav1.Condition) bool {
	return meta.IsStatusConditionFalse(conds, string(c))
}

// IsUnknown reports whether the condition is missing or Unknown.
func (c Cond) IsUnknown(conds []metav1.Condition) bool {
	cond := c.Get(conds)
	return cond == nil || cond.Status == metav1.ConditionUnknown
}

// Reason returns the condition's reason, "" when it is missing.
func (c Cond) Reason(conds []metav1.Condition) string {
	if cond := c.Get(conds); cond != nil {
		return cond.Reason
	}
	return ""
}

// Message returns the condition's message, "" when it is missing.
func (c Cond) Message(conds []metav1.Condition) string {
	if cond := c.Get(conds); cond != nil {
		return cond.Message
	}
	return ""
}

// Remove deletes the condition; it reports whether it was there.
func (c Cond) Remove(conds *[]metav1.Condition) bool {
	return meta.RemoveStatusCondition(conds, string(c))
}
