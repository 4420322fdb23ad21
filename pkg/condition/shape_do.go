package condition

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The helpers below are those of do.go for conditions of any shape, such as
// wrangler's genericcondition.GenericCondition: a port keeps its stored
// conditions and its calls change only in taking the list.

// Find returns cond in conds, nil when the list does not have it. (The
// Get field reads one condition, hence the name.)
func (s Shape[C]) Find(conds []C, cond Cond) *C {
	for i := range conds {
		if s.Get(&conds[i]).Type == string(cond) {
			return &conds[i]
		}
	}
	return nil
}

// find returns the fields of cond in conds and whether the list has it.
func (s Shape[C]) find(conds []C, cond Cond) (Fields, bool) {
	if c := s.Find(conds, cond); c != nil {
		return s.Get(c), true
	}
	return Fields{}, false
}

// keepsGeneration reports whether C has a field for the observed
// generation, by writing one into a zero C and reading it back.
func (s Shape[C]) keepsGeneration() bool {
	var c C
	s.Put(&c, Fields{ObservedGeneration: 1})
	return s.Get(&c).ObservedGeneration == 1
}

// Do runs f and records its outcome in cond as SetError does (True on
// success; False with reason and f's error otherwise), and returns f's
// error: wrangler's cond.Do for a list of conditions of any shape.
func (s Shape[C]) Do(conds *[]C, cond Cond, generation int64, reason string, f func() error) error {
	err := f()
	s.SetError(conds, cond, generation, reason, err)
	return err
}

// DoUntilTrue is Do, except that a condition already True skips f
// (wrangler's cond.DoUntilTrue). When C keeps an observed generation, a
// True condition of an older generation runs f again, as Cond.DoUntilTrue
// does; a type without one, such as wrangler's GenericCondition, cannot
// tell, and True skips f for good, as in wrangler.
func (s Shape[C]) DoUntilTrue(conds *[]C, cond Cond, generation int64, reason string, f func() error) error {
	if got, ok := s.find(*conds, cond); ok && got.Status == string(metav1.ConditionTrue) &&
		(got.ObservedGeneration >= generation || !s.keepsGeneration()) {
		return nil
	}
	return s.Do(conds, cond, generation, reason, f)
}

// CreateUnknownIfNotExists adds cond as Unknown when the list does not have
// it, leaves an existing one alone, and reports whether it added it
// (wrangler's cond.CreateUnknownIfNotExists).
func (s Shape[C]) CreateUnknownIfNotExists(conds *[]C, cond Cond, generation int64) bool {
	if s.Find(*conds, cond) != nil {
		return false
	}
	return s.Set(conds, cond, metav1.ConditionUnknown, generation, ReasonUnknown, "")
}

// LastUpdateTime returns when cond last changed in any way (wrangler's
// cond.GetLastUpdated): its LastUpdateTime, or its LastTransitionTime for a
// type that keeps no update time; the zero time when the list does not
// have it.
func (s Shape[C]) LastUpdateTime(conds []C, cond Cond) time.Time {
	got, _ := s.find(conds, cond)
	if !got.LastUpdateTime.IsZero() {
		return got.LastUpdateTime.Time
	}
	return got.LastTransitionTime.Time
}

// LastTransitionTime returns when cond's status last changed, the zero
// time when the list does not have it.
func (s Shape[C]) LastTransitionTime(conds []C, cond Cond) time.Time {
	got, _ := s.find(conds, cond)
	return got.LastTransitionTime.Time
}

// IsTrue reports whether cond is in conds with status True.
func (s Shape[C]) IsTrue(conds []C, cond Cond) bool {
	got, ok := s.find(conds, cond)
	return ok && got.Status == string(metav1.ConditionTrue)
}

// IsFalse reports whether cond is in conds with status False.
func (s Shape[C]) IsFalse(conds []C, cond Cond) bool {
	got, ok := s.find(conds, cond)
	return ok && got.Status == string(metav1.ConditionFalse)
}

// IsUnknown reports whether cond is missing from conds or Unknown, as
// Cond.IsUnknown does: a condition nobody set yet is not known.
func (s Shape[C]) IsUnknown(conds []C, cond Cond) bool {
	got, ok := s.find(conds, cond)
	return !ok || got.Status == string(metav1.ConditionUnknown)
}

// Reason returns cond's reason, "" when conds does not have it.
func (s Shape[C]) Reason(conds []C, cond Cond) string {
	got, _ := s.find(conds, cond)
	return got.Reason
}

// Message returns cond's message, "" when conds does not have it.
func (s Shape[C]) Message(conds []C, cond Cond) string {
	got, _ := s.find(conds, cond)
	return got.Message
}
