package condition

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Fields are the parts of one condition that Shape reads and writes,
// whatever the Go type that holds them: wrangler's
// genericcondition.GenericCondition, cluster-api's v1beta1 Condition, or a
// type of an operator's own. A field the type lacks reads as zero and is
// not written.
type Fields struct {
	Type, Status, Reason, Message string
	ObservedGeneration            int64
	// Times are kept in whole seconds, as the API server stores them.
	LastTransitionTime, LastUpdateTime metav1.Time
}

// Shape sets conditions held in a slice of any struct type C, through
// functions that read and write C's fields (the code generator writes them
// for each status whose conditions are not []metav1.Condition), with the
// rules of Cond.Set: a condition changes only when its status, reason,
// message or observed generation differ; LastTransitionTime moves only
// when the status changes, LastUpdateTime on every change. Fields of C that
// Get and Put do not cover (cluster-api's Severity, say) are kept.
type Shape[C any] struct {
	// Get reads the fields of one condition.
	Get func(c *C) Fields
	// Put writes the fields the type has into one condition.
	Put func(c *C, f Fields)
}

// Set sets cond's status, reason and message for the object's generation
// in conds, adding the condition if it is missing, and reports whether
// anything changed. Empty reasons and long messages are handled as by
// Cond.Set.
func (s Shape[C]) Set(conds *[]C, cond Cond, status metav1.ConditionStatus, generation int64, reason, message string) bool {
	want := Fields{
		Type:               string(cond),
		Status:             string(status),
		Reason:             defaultReason(status, reason),
		Message:            TruncateMessage(message),
		ObservedGeneration: generation,
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	for i := range *conds {
		c := &(*conds)[i]
		old := s.Get(c)
		if old.Type != want.Type {
			continue
		}
		next := *c
		f := old
		f.Status, f.Reason, f.Message, f.ObservedGeneration = want.Status, want.Reason, want.Message, want.ObservedGeneration
		s.Put(&next, f)
		// Compare what the type holds: fields it lacks read as zero.
		got := s.Get(&next)
		got.LastTransitionTime, got.LastUpdateTime = old.LastTransitionTime, old.LastUpdateTime
		if got == old {
			return false
		}
		if got.Status != old.Status {
			f.LastTransitionTime = now
		}
		f.LastUpdateTime = now
		s.Put(&next, f)
		*c = next
		return true
	}
	var c C
	want.LastTransitionTime, want.LastUpdateTime = now, now
	s.Put(&c, want)
	*conds = append(*conds, c)
	return true
}

// SetError sets cond from the outcome of some work, as Cond.SetError does.
func (s Shape[C]) SetError(conds *[]C, cond Cond, generation int64, reason string, err error) bool {
	if err == nil {
		return s.Set(conds, cond, metav1.ConditionTrue, generation, ReasonSucceeded, "")
	}
	return s.Set(conds, cond, metav1.ConditionFalse, generation, reason, err.Error())
}

// SetString stores v into a field of a string kind, such as
// corev1.ConditionStatus: generated Shapes use it so that they need not
// import the packages of the fields' types.
func SetString[T ~string](field *T, v string) { *field = T(v) }

// TimeFromString reads a time kept as an RFC 3339 string, as wrangler's
// GenericCondition keeps it; an empty or unreadable one is the zero time.
func TimeFromString[T ~string](s T) metav1.Time {
	t, err := time.Parse(time.RFC3339, string(s))
	if err != nil {
		return metav1.Time{}
	}
	return metav1.NewTime(t)
}

// SetTimeString stores t into a time field kept as an RFC 3339 string.
func SetTimeString[T ~string](field *T, t metav1.Time) {
	if t.IsZero() {
		*field = ""
		return
	}
	*field = T(t.UTC().Format(time.RFC3339))
}
