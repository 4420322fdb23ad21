package condition_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/condition"
)

// capiCondition keeps an observed generation, as cluster-api's and
// metav1's conditions do.
type capiCondition struct {
	Type, Status, Reason, Message string
	ObservedGeneration            int64
}

var capiShape = condition.Shape[capiCondition]{
	Get: func(c *capiCondition) condition.Fields {
		return condition.Fields{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration}
	},
	Put: func(c *capiCondition, f condition.Fields) {
		c.Type, c.Status, c.Reason, c.Message, c.ObservedGeneration = f.Type, f.Status, f.Reason, f.Message, f.ObservedGeneration
	},
}

// A shape that keeps the observed generation runs DoUntilTrue's work again
// for a newer generation, as Cond.DoUntilTrue does; one that does not keeps
// skipping it once True (TestDoUntilTrueWithoutGeneration in
// pkg/genericcondition).
func TestShapeDoUntilTrueRunsOncePerGeneration(t *testing.T) {
	var conds []capiCondition
	runs := 0
	work := func() error { runs++; return nil }
	for range 2 {
		if err := capiShape.DoUntilTrue(&conds, "Imported", 1, "", work); err != nil {
			t.Fatal(err)
		}
	}
	if runs != 1 {
		t.Fatalf("f ran %d times for one generation, want once", runs)
	}
	if err := capiShape.DoUntilTrue(&conds, "Imported", 2, "", work); err != nil || runs != 2 {
		t.Fatalf("f ran %d times after the generation changed (err %v), want twice", runs, err)
	}
	if !capiShape.IsTrue(conds, "Imported") || conds[0].ObservedGeneration != 2 || len(conds) != 1 {
		t.Fatalf("after DoUntilTrue: %+v", conds)
	}
}
