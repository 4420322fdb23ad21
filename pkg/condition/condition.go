// Package condition sets and reads the standard conditions of an object's
// status (metav1.Condition) by name, the way wrangler's condition package
// does, but typed (Shape sets conditions of other struct types, such as
// wrangler's GenericCondition): it works on a *[]metav1.Condition that the caller takes
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
// Messages are cut to what the API server accepts (TruncateMessage), so a
// long error cannot make every status write fail.
package condition

import (
	"strings"
	"unicode/utf8"

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
// anything changed. A message the API server would reject is cut to fit
// (see TruncateMessage).
func (c Cond) Set(conds *[]metav1.Condition, status metav1.ConditionStatus, generation int64, reason, message string) bool {
	return meta.SetStatusCondition(conds, metav1.Condition{
		Type:               string(c),
		Status:             status,
		ObservedGeneration: generation,
		Reason:             defaultReason(status, reason),
		Message:            TruncateMessage(message),
	})
}

// defaultReason is reason, or when it is empty the one the status implies:
// the API requires a non-empty reason.
func defaultReason(status metav1.ConditionStatus, reason string) string {
	if reason != "" {
		return reason
	}
	switch status {
	case metav1.ConditionTrue:
		return ReasonSucceeded
	case metav1.ConditionFalse:
		return ReasonFailed
	default:
		return ReasonUnknown
	}
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

// MaxMessageLength is the longest message the API server accepts in a
// metav1.Condition (32 KiB, counted in bytes by built-in kinds and in
// characters by CRD schemas; a byte limit satisfies both).
const MaxMessageLength = 32768

// TruncatedMarker ends a condition message that was cut to fit
// MaxMessageLength, so a reader knows there was more.
const TruncatedMarker = "… (truncated)"

// TruncateMessage makes message fit a condition: valid UTF-8 (the API
// server would otherwise turn each invalid byte into a three-byte
// replacement character and could push it over the limit) of at most
// MaxMessageLength bytes, cut on a character boundary and ended with
// TruncatedMarker when it was longer. Set applies it, so one long error
// (a whole response body, say) cannot make every status write fail.
func TruncateMessage(message string) string {
	message = strings.ToValidUTF8(message, string(utf8.RuneError))
	if len(message) <= MaxMessageLength {
		return message
	}
	cut := MaxMessageLength - len(TruncatedMarker)
	for cut > 0 && !utf8.RuneStart(message[cut]) {
		cut--
	}
	return message[:cut] + TruncatedMarker
}
