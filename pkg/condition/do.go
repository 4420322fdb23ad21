package condition

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Do runs f and records its outcome in the condition, as SetError does
// (True on success; False with reason and f's error otherwise), and returns
// f's error. It is wrangler's cond.Do for a typed condition list: wrangler's
// f returned the object because the condition lived in it; here f changes
// whatever it likes and the condition list is the caller's.
func (c Cond) Do(conds *[]metav1.Condition, generation int64, reason string, f func() error) error {
	err := f()
	c.SetError(conds, generation, reason, err)
	return err
}

// DoUntilTrue is Do, except that a condition already True for generation or
// a later one skips f: for work done once per spec, such as a one-time
// migration or an initial import (wrangler's cond.DoUntilTrue). A True
// condition of an older generation runs f again, since the spec changed.
func (c Cond) DoUntilTrue(conds *[]metav1.Condition, generation int64, reason string, f func() error) error {
	if cond := c.Get(*conds); cond != nil && cond.Status == metav1.ConditionTrue && cond.ObservedGeneration >= generation {
		return nil
	}
	return c.Do(conds, generation, reason, f)
}

// CreateUnknownIfNotExists adds the condition as Unknown when the list does
// not have it, and leaves an existing one alone; it reports whether it
// added it. Status handlers call it first so that every condition an object
// has is listed from its first status write (wrangler's
// cond.CreateUnknownIfNotExists).
func (c Cond) CreateUnknownIfNotExists(conds *[]metav1.Condition, generation int64) bool {
	if c.Get(*conds) != nil {
		return false
	}
	return c.Unknown(conds, generation, ReasonUnknown, "")
}

// LastTransitionTime returns when the condition's status last changed, the
// zero time when the list does not have it. metav1.Condition keeps no
// separate last-update time: wrangler's cond.GetLastUpdated maps to this,
// and its LastUpdated (a write that only moves the time) has no equivalent,
// since the setters keep a condition unchanged when nothing but the time
// would differ, so that status handlers write nothing new.
func (c Cond) LastTransitionTime(conds []metav1.Condition) time.Time {
	if cond := c.Get(conds); cond != nil {
		return cond.LastTransitionTime.Time
	}
	return time.Time{}
}
