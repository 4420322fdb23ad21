package condition_test

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// Shape reads a condition as Cond does: Reason and Message of the named
// condition ("" when missing), IsTrue, IsFalse and IsUnknown by its status,
// a missing condition being Unknown. Both shapes are read, with and
// without an observed generation, and the getters answer for the named
// condition only, not for another one in the list.
func TestShapeGettersMatchCond(t *testing.T) {
	var generic []genericCondition
	genericShape.SetError(&generic, "Ready", 1, "Deploying", errors.New("pods pending"))
	genericShape.Set(&generic, "Synced", "True", 1, "", "")
	var capi []capiCondition
	capiShape.SetError(&capi, "Ready", 1, "Deploying", errors.New("pods pending"))
	capiShape.Set(&capi, "Synced", "True", 1, "", "")
	var metav1Conds []metav1.Condition
	condition.Cond("Ready").SetError(&metav1Conds, 1, "Deploying", errors.New("pods pending"))
	condition.Cond("Synced").True(&metav1Conds, 1, "", "")

	type getters struct {
		reason, message         string
		isTrue, isFalse, isUnkn bool
	}
	for _, name := range []condition.Cond{"Ready", "Synced", "Missing"} {
		want := getters{name.Reason(metav1Conds), name.Message(metav1Conds), name.IsTrue(metav1Conds), name.IsFalse(metav1Conds), name.IsUnknown(metav1Conds)}
		gotGeneric := getters{genericShape.Reason(generic, name), genericShape.Message(generic, name),
			genericShape.IsTrue(generic, name), genericShape.IsFalse(generic, name), genericShape.IsUnknown(generic, name)}
		gotCapi := getters{capiShape.Reason(capi, name), capiShape.Message(capi, name),
			capiShape.IsTrue(capi, name), capiShape.IsFalse(capi, name), capiShape.IsUnknown(capi, name)}
		if gotGeneric != want || gotCapi != want {
			t.Errorf("%s: generic shape %+v, capi shape %+v; Cond says %+v", name, gotGeneric, gotCapi, want)
		}
	}
	// The answers Cond gives, spelled out, so that a Cond bug cannot hide
	// the same bug in Shape.
	if r, m := genericShape.Reason(generic, "Ready"), genericShape.Message(generic, "Ready"); r != "Deploying" || m != "pods pending" {
		t.Errorf("Ready: reason %q message %q, want Deploying and pods pending", r, m)
	}
	if !genericShape.IsFalse(generic, "Ready") || genericShape.IsUnknown(generic, "Ready") || genericShape.IsTrue(generic, "Ready") {
		t.Error("Ready is False and only False")
	}
	if !genericShape.IsUnknown(generic, "Missing") || genericShape.IsFalse(generic, "Missing") {
		t.Error("a missing condition is Unknown and not False")
	}
	genericShape.Set(&generic, "Ready", "Unknown", 1, "", "")
	if !genericShape.IsUnknown(generic, "Ready") || genericShape.Reason(generic, "Ready") != condition.ReasonUnknown {
		t.Errorf("Ready set Unknown: %+v", generic)
	}
}
