package kvscheduler_test

import (
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A takeover of a derived key followed by a failed update of the old
// base, without revert. b/1 = v@1 derives d/1. One transaction requests
// b/0 = w@1, which derives d/1 (free: b/1 is requested further on with
// v@2, which derives d/2), and b/1 = v@2, whose update fails: the
// southbound holds b/0 = w@1, d/1 = w@1 (b/0's) and b/1 = v@1 (FAILED).
// The northbound then requests b/1 = v@1 again. Rule 8: a key is one
// value; b/1 derives d/1, which b/0, wanted and CONFIGURED, derives: b/1
// must be INVALID (or b/0, but not both valid). Instead the request is
// CONFIGURED and overwrites b/0's derived value (update d/1 to v@1), both
// bases are reported CONFIGURED deriving one key, and deleting b/0 then
// deletes d/1 as b/0's, leaving b/1 CONFIGURED without its derived value
// (Commit nil both times). The read-back after the failed update seems to
// give d/1 back to b/1 while b/0 still lists it.

func TestAdv4TakenOverKeyIsNotGivenBackByAFailedUpdate(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b, d := adv3AtDerived(sb)
	register(t, s, b, d)
	mustSet(t, s, "b/1", "v@1")
	sb.FailNext("update", "b/1", errors.New("boom"))
	if err := set(t, s, "b/0", "w@1", "b/1", "v@2"); err == nil {
		t.Fatal("the update of b/1 failed, Commit returned nil")
	}
	sb.ResetOps()
	err := set(t, s, "b/1", "v@1")
	b0, b1 := s.GetValueStatus("b/0"), s.GetValueStatus("b/1")
	if b0.State == kvscheduler.Configured && b1.State == kvscheduler.Configured {
		t.Errorf("b/0 = w@1 and b/1 = v@1 both derive d/1, yet both are CONFIGURED (Commit %v, ops %v, southbound %v)",
			err, sb.OpStrings(), sb.Values())
	}
	sb.ResetOps()
	err = set(t, s, "b/0", nil)
	want := map[string]any{"b/1": "v@1", "d/1": "v@1"}
	if got := sb.Values(); len(got) != len(want) || got["b/1"] != want["b/1"] || got["d/1"] != want["d/1"] {
		t.Errorf("b/0 withdrawn (Commit %v, ops %v): the southbound holds %v, want %v; b/1 %s; d/1 %s",
			err, sb.OpStrings(), got, want, advState(s, "b/1"), advState(s, "d/1"))
	}
}
