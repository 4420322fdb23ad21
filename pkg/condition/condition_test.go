package condition_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

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

func TestTruncateMessage(t *testing.T) {
	exact := strings.Repeat("a", condition.MaxMessageLength)
	if got := condition.TruncateMessage(exact); got != exact {
		t.Errorf("a message of exactly the limit was changed to %d bytes", len(got))
	}
	for name, msg := range map[string]string{
		"ascii":          strings.Repeat("a", 100*1024),
		"two-byte runes": strings.Repeat("é", 50*1024),
		"four-byte":      strings.Repeat("😀", 25*1024),
		"invalid UTF-8":  strings.Repeat("a\xff", condition.MaxMessageLength/2), // each \xff grows to three bytes
	} {
		got := condition.TruncateMessage(msg)
		if len(got) > condition.MaxMessageLength || !utf8.ValidString(got) || !strings.HasSuffix(got, condition.TruncatedMarker) {
			t.Errorf("%s: %d bytes, valid UTF-8 %v, marked %v", name, len(got), utf8.ValidString(got), strings.HasSuffix(got, condition.TruncatedMarker))
		}
		if body := strings.TrimSuffix(got, condition.TruncatedMarker); len(body) < condition.MaxMessageLength-len(condition.TruncatedMarker)-utf8.UTFMax {
			t.Errorf("%s: cut more than one character short: %d bytes kept", name, len(body))
		}
	}
	// Set applies it: setting the same long message again changes nothing,
	// so a failing handler does not write the status again and again.
	var conds []metav1.Condition
	long := strings.Repeat("x", 2*condition.MaxMessageLength)
	ready.False(&conds, 1, "", long)
	if n := len(ready.Message(conds)); n > condition.MaxMessageLength {
		t.Fatalf("Set stored a message of %d bytes", n)
	}
	if ready.False(&conds, 1, "", long) {
		t.Error("setting the same long message again reported a change")
	}
}
