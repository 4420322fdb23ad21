package condition_test

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/condition"
)

const ready = condition.Cond("Ready")

func TestSetErrorAndRead(t *testing.T) {
	var conds []metav1.Condition
	if !ready.IsUnknown(conds) || ready.Get(conds) != nil {
		t.Fatal("a missing condition must read as unknown and nil")
	}

	if changed := ready.SetError(&conds, 3, "Deploying", errors.New("image not found")); !changed {
		t.Fatal("setting a new condition reported no change")
	}
	if !ready.IsFalse(conds) || ready.Reason(conds) != "Deploying" || ready.Message(conds) != "image not found" {
		t.Fatalf("after an error: %+v", conds)
	}
	if got := ready.Get(conds).ObservedGeneration; got != 3 {
		t.Fatalf("observedGeneration %d, want 3", got)
	}
	firstTransition := ready.Get(conds).LastTransitionTime

	if changed := ready.SetError(&conds, 3, "Deploying", errors.New("image not found")); changed {
		t.Fatal("setting the same condition again reported a change")
	}

	if changed := ready.SetError(&conds, 4, "Deploying", nil); !changed {
		t.Fatal("success after failure reported no change")
	}
	if !ready.IsTrue(conds) || ready.Reason(conds) != condition.ReasonSucceeded || ready.Message(conds) != "" {
		t.Fatalf("after success: %+v", conds)
	}
	if ready.Get(conds).LastTransitionTime.Before(&firstTransition) {
		t.Fatal("LastTransitionTime went backwards")
	}
	if len(conds) != 1 {
		t.Fatalf("%d conditions, want one", len(conds))
	}
}

func TestDefaultReasonsAndRemove(t *testing.T) {
	var conds []metav1.Condition
	other := condition.Cond("Available")
	ready.Unknown(&conds, 1, "", "waiting")
	other.False(&conds, 1, "", "")
	if ready.Reason(conds) != condition.ReasonUnknown || other.Reason(conds) != condition.ReasonFailed {
		t.Fatalf("default reasons: %+v", conds)
	}
	if !ready.Remove(&conds) || ready.Remove(&conds) {
		t.Fatal("Remove must report presence once")
	}
	if len(conds) != 1 || !other.IsFalse(conds) {
		t.Fatalf("removing one condition touched another: %+v", conds)
	}
}
