package condition_test

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/condition"
)

func TestDoRecordsOutcome(t *testing.T) {
	var conds []metav1.Condition
	failure := errors.New("registry unreachable")
	if err := ready.Do(&conds, 1, "Pulling", func() error { return failure }); !errors.Is(err, failure) {
		t.Fatalf("Do returned %v, want f's error", err)
	}
	if !ready.IsFalse(conds) || ready.Reason(conds) != "Pulling" || ready.Message(conds) != failure.Error() {
		t.Fatalf("after a failing Do: %+v", conds)
	}
	if err := ready.Do(&conds, 1, "Pulling", func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if !ready.IsTrue(conds) {
		t.Fatalf("after a succeeding Do: %+v", conds)
	}
}

func TestDoUntilTrueRunsOncePerGeneration(t *testing.T) {
	imported := condition.Cond("Imported")
	var conds []metav1.Condition
	runs := 0
	work := func() error { runs++; return nil }
	for range 2 {
		if err := imported.DoUntilTrue(&conds, 1, "", work); err != nil {
			t.Fatal(err)
		}
	}
	if runs != 1 {
		t.Fatalf("f ran %d times for one generation, want once", runs)
	}
	if err := imported.DoUntilTrue(&conds, 2, "", work); err != nil || runs != 2 {
		t.Fatalf("f ran %d times after the generation changed (err %v), want twice", runs, err)
	}
	// A False condition runs f again.
	imported.False(&conds, 2, "", "broken")
	if err := imported.DoUntilTrue(&conds, 2, "", work); err != nil || runs != 3 || !imported.IsTrue(conds) {
		t.Fatalf("f ran %d times with a False condition (err %v), want 3 and True", runs, err)
	}
}

func TestCreateUnknownIfNotExistsAndLastTransitionTime(t *testing.T) {
	var conds []metav1.Condition
	if !ready.LastTransitionTime(conds).IsZero() {
		t.Fatal("a missing condition has a transition time")
	}
	if !ready.CreateUnknownIfNotExists(&conds, 1) {
		t.Fatal("a missing condition was not added")
	}
	c := ready.Get(conds)
	if c == nil || c.Status != metav1.ConditionUnknown || c.Reason == "" {
		t.Fatalf("added condition %+v, want Unknown with a reason (the API requires one)", c)
	}
	if ready.LastTransitionTime(conds).IsZero() {
		t.Fatal("an added condition has no transition time")
	}
	ready.True(&conds, 1, "", "")
	if ready.CreateUnknownIfNotExists(&conds, 2) || !ready.IsTrue(conds) {
		t.Fatalf("an existing condition was replaced: %+v", conds)
	}
}
