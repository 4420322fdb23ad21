package kvscheduler_test

import (
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv19BFailedDeleteFreesTheDerivedKeyItTook is
// TestAdv18BaseConfiguredWithoutItsDerivedValueSeed2010311 reduced: the
// southbound holds its own b/2 = w@2|n/1,n/1 (deriving d/2); b/1 =
// w@1@2| (deriving d/1 and d/2) and b/2 = w| are created together. d/2's
// create fails and b/2's (already exists) read-back gives it the key:
// d/2 is b/2's, b/1 waits to derive it again. b/2 is then requested as
// v@1|~a/2, INVALID for the clash on b/1's d/1: its delete deletes d/2
// (not in the southbound) and then fails. Nothing holds or derives d/2
// any more, so b/1, CONFIGURED, must derive it again: before, b/2 kept
// listing d/2 after its failed delete, so the key stayed "another
// base's", and b/1 stayed CONFIGURED with d/2 NONEXISTENT.
func TestAdv19BFailedDeleteFreesTheDerivedKeyItTook(t *testing.T) {
	withFzFlags(t, fzDerivedDeps)
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	_ = s.PushSBNotification("n/1", "up", nil)
	sb.Set("b/2", "w@2|n/1,n/1", true)
	sb.FailNext("create", "d/2", errors.New("injected"))
	if err := set(t, s, "b/1", "w@1@2|", "b/2", "w|"); err == nil {
		t.Fatal("d/2's create failed, Commit returned nil")
	}
	if st := s.GetValueStatus("d/2"); st.BaseKey != "b/2" {
		t.Fatalf("setup: d/2 %s under %q, want b/2's", advState(s, "d/2"), st.BaseKey)
	}
	wantState(t, s, "b/1", kvscheduler.Configured)
	sb.FailNext("delete", "b/2", errors.New("injected"))
	if err := set(t, s, "b/2", "v@1|~a/2"); err == nil {
		t.Fatal("b/2's delete failed, Commit returned nil")
	}
	if msg := fzCheckDerivedHeld(s); msg != "" {
		t.Fatalf("after b/2's failed delete (ops %v): %s", sb.OpStrings(), msg)
	}
	wantState(t, s, "d/2", kvscheduler.Configured)
	if st := s.GetValueStatus("d/2"); st.BaseKey != "b/1" {
		t.Errorf("d/2 is under %q, want b/1's (b/2 neither holds nor derives it)", st.BaseKey)
	}
	advWantAgree(t, s, sb, "after b/2's failed delete", "b/", "d/")
}
