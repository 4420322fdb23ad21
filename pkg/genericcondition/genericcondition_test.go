package genericcondition_test

import (
	"encoding/json"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/lariat-dev/lariat/pkg/condition"
	"github.com/lariat-dev/lariat/pkg/genericcondition"
)

const ready = condition.Cond("Ready")

// Conditions stored by a wrangler operator read into GenericCondition and
// write back byte for byte: the JSON names and omitempty are wrangler's.
func TestJSONIsWranglers(t *testing.T) {
	stored := `[{"type":"Ready","status":"False","lastUpdateTime":"2024-05-01T10:00:00Z","lastTransitionTime":"2024-04-01T09:00:00Z","reason":"Error","message":"image not found"},{"type":"Imported","status":"Unknown"}]`
	var conds []genericcondition.GenericCondition
	if err := json.Unmarshal([]byte(stored), &conds); err != nil {
		t.Fatal(err)
	}
	if c := conds[0]; c.Status != corev1.ConditionFalse || c.LastUpdateTime != "2024-05-01T10:00:00Z" ||
		c.LastTransitionTime != "2024-04-01T09:00:00Z" || c.Reason != "Error" || c.Message != "image not found" {
		t.Fatalf("read %+v", c)
	}
	out, err := json.Marshal(conds)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != stored {
		t.Fatalf("wrote\n%s\nwant\n%s", out, stored)
	}
	if got := genericcondition.Shape().LastTransitionTime(conds, ready).UTC().Format("2006-01-02T15:04:05Z"); got != "2024-04-01T09:00:00Z" {
		t.Fatalf("LastTransitionTime of a stored condition: %s", got)
	}
}

func TestDoRecordsOutcome(t *testing.T) {
	s := genericcondition.Shape()
	var conds []genericcondition.GenericCondition
	failure := errors.New("registry unreachable")
	if err := s.Do(&conds, ready, 1, "Pulling", func() error { return failure }); !errors.Is(err, failure) {
		t.Fatalf("Do returned %v, want f's error", err)
	}
	if c := s.Find(conds, ready); c == nil || c.Status != corev1.ConditionFalse || c.Reason != "Pulling" ||
		c.Message != failure.Error() || c.LastUpdateTime == "" || c.LastTransitionTime == "" {
		t.Fatalf("after a failing Do: %+v", conds)
	}
	if err := s.Do(&conds, ready, 1, "Pulling", func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if !s.IsTrue(conds, ready) || conds[0].Message != "" || len(conds) != 1 {
		t.Fatalf("after a succeeding Do: %+v", conds)
	}
}

// GenericCondition keeps no observed generation, so once True the work is
// never run again, as with wrangler's cond.DoUntilTrue; False runs it.
func TestDoUntilTrueWithoutGeneration(t *testing.T) {
	s := genericcondition.Shape()
	imported := condition.Cond("Imported")
	var conds []genericcondition.GenericCondition
	runs := 0
	work := func() error { runs++; return nil }
	for gen := int64(1); gen <= 3; gen++ {
		if err := s.DoUntilTrue(&conds, imported, gen, "", work); err != nil {
			t.Fatal(err)
		}
	}
	if runs != 1 {
		t.Fatalf("f ran %d times, want once", runs)
	}
	s.Set(&conds, imported, "False", 3, "Broken", "lost")
	if err := s.DoUntilTrue(&conds, imported, 3, "", work); err != nil || runs != 2 || !s.IsTrue(conds, imported) {
		t.Fatalf("f ran %d times with a False condition (err %v), want twice and True: %+v", runs, err, conds)
	}
}

func TestCreateUnknownIfNotExists(t *testing.T) {
	s := genericcondition.Shape()
	var conds []genericcondition.GenericCondition
	if !s.CreateUnknownIfNotExists(&conds, ready, 1) {
		t.Fatal("a missing condition was not added")
	}
	if c := conds[0]; c.Type != "Ready" || c.Status != corev1.ConditionUnknown || c.Reason != condition.ReasonUnknown {
		t.Fatalf("added %+v", c)
	}
	s.SetError(&conds, ready, 1, "", nil)
	if s.CreateUnknownIfNotExists(&conds, ready, 1) || !s.IsTrue(conds, ready) || len(conds) != 1 {
		t.Fatalf("an existing condition was changed: %+v", conds)
	}
}

// A new message moves LastUpdateTime, not LastTransitionTime; the status
// changing moves both.
func TestLastUpdateTime(t *testing.T) {
	s := genericcondition.Shape()
	old := "2020-01-01T00:00:00Z"
	conds := []genericcondition.GenericCondition{{Type: "Ready", Status: corev1.ConditionFalse, Reason: "Pulling", Message: "a",
		LastUpdateTime: old, LastTransitionTime: old}}
	if got := s.LastUpdateTime(conds, ready).UTC().Format("2006-01-02T15:04:05Z"); got != old {
		t.Fatalf("LastUpdateTime %s, want %s", got, old)
	}
	if !s.Set(&conds, ready, "False", 1, "Pulling", "b") {
		t.Fatal("a new message reported no change")
	}
	if conds[0].LastTransitionTime != old || conds[0].LastUpdateTime == old || !s.LastUpdateTime(conds, ready).After(s.LastTransitionTime(conds, ready)) {
		t.Fatalf("after a message change: %+v", conds[0])
	}
	if !s.LastUpdateTime(nil, ready).IsZero() {
		t.Fatal("a missing condition has a last-update time")
	}
}

func TestDeepCopy(t *testing.T) {
	in := &genericcondition.GenericCondition{Type: "Ready", Status: corev1.ConditionTrue, Message: "ok"}
	out := in.DeepCopy()
	out.Message = "changed"
	if in.Message != "ok" || out.Type != "Ready" {
		t.Fatalf("copy shares state: in %+v, out %+v", in, out)
	}
	var nilCond *genericcondition.GenericCondition
	if nilCond.DeepCopy() != nil {
		t.Fatal("DeepCopy of nil is not nil")
	}
}
