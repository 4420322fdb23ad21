package condition_test

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/condition"
)

// genericCondition has the shape of wrangler's
// genericcondition.GenericCondition: string times, no observed generation.
type genericCondition struct {
	Type               string
	Status             corev1.ConditionStatus
	LastUpdateTime     string
	LastTransitionTime string
	Reason             string
	Message            string
	// Severity stands for fields Shape does not know, which it keeps.
	Severity string
}

var genericShape = condition.Shape[genericCondition]{
	Get: func(c *genericCondition) condition.Fields {
		return condition.Fields{
			Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message,
			LastUpdateTime:     condition.TimeFromString(c.LastUpdateTime),
			LastTransitionTime: condition.TimeFromString(c.LastTransitionTime),
		}
	},
	Put: func(c *genericCondition, f condition.Fields) {
		condition.SetString(&c.Type, f.Type)
		condition.SetString(&c.Status, f.Status)
		condition.SetString(&c.Reason, f.Reason)
		condition.SetString(&c.Message, f.Message)
		condition.SetTimeString(&c.LastUpdateTime, f.LastUpdateTime)
		condition.SetTimeString(&c.LastTransitionTime, f.LastTransitionTime)
	},
}

func TestShapeSetError(t *testing.T) {
	var conds []genericCondition
	if !genericShape.SetError(&conds, ready, 3, "Deploying", errors.New("image not found")) {
		t.Fatal("setting a new condition reported no change")
	}
	c := conds[0]
	if c.Type != "Ready" || c.Status != corev1.ConditionFalse || c.Reason != "Deploying" || c.Message != "image not found" ||
		c.LastTransitionTime == "" || c.LastUpdateTime == "" {
		t.Fatalf("after an error: %+v", c)
	}
	// The generation differs, but the type has no field for it: nothing
	// the type holds changes, so nothing is reported (no endless writes).
	if genericShape.SetError(&conds, ready, 4, "Deploying", errors.New("image not found")) {
		t.Fatal("setting the same condition again reported a change")
	}
	conds[0].Severity = "Warning"
	conds[0].LastTransitionTime, conds[0].LastUpdateTime = "2020-01-01T00:00:00Z", "2020-01-01T00:00:00Z"
	if !genericShape.SetError(&conds, ready, 4, "Deploying", errors.New("pull failed")) {
		t.Fatal("a new message reported no change")
	}
	if c := conds[0]; c.LastTransitionTime != "2020-01-01T00:00:00Z" || c.LastUpdateTime == "2020-01-01T00:00:00Z" || c.Severity != "Warning" {
		t.Fatalf("a message change must move LastUpdateTime only and keep other fields: %+v", c)
	}
	if !genericShape.SetError(&conds, ready, 5, "", nil) {
		t.Fatal("success after failure reported no change")
	}
	if c := conds[0]; c.Status != corev1.ConditionTrue || c.Reason != condition.ReasonSucceeded || c.Message != "" ||
		c.LastTransitionTime == "2020-01-01T00:00:00Z" {
		t.Fatalf("after success: %+v", c)
	}
	if len(conds) != 1 {
		t.Fatalf("%d conditions, want one", len(conds))
	}
	genericShape.Set(&conds, "Available", metav1.ConditionUnknown, 5, "", "")
	if len(conds) != 2 || conds[1].Reason != condition.ReasonUnknown || conds[0].Type != "Ready" {
		t.Fatalf("a second condition: %+v", conds)
	}
}
