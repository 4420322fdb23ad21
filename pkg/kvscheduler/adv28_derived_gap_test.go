package kvscheduler_test

import (
	"slices"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv28DependentOfDerivedProvidersLeavingInTurnIsKept attacks depGap
// with derived providers, whose leave and return it does not time (a
// derived value's base request is "not known here", and counts as going
// for good). b/1 = v@1| and b/2 = v@2| derive d/1 and d/2; b/ values are
// updated by re-creation; a/5 = v|d/*,~a/1 Requires any d/ key and is
// ordered after a/1. One transaction deletes a/1, re-creates b/1 as w@1|
// (d/1 goes and comes back while d/2 is there) and re-creates b/2 as
// w@2|a/99, into PENDING (d/2 goes while d/1 is back). a/5 is met at every
// moment, and each re-create alone leaves it in place; together, a/5 is
// deleted before a/1 and, a/1 gone, stays PENDING: a wanted value taken
// away although nothing it Requires was ever missing (docs/safety.md: a
// dependent kept met at every moment of a step is not taken down). It
// fails so at 7aaacaf and 6482911^ too.
func TestAdv28DependentOfDerivedProvidersLeavingInTurnIsKept(t *testing.T) {
	h := newAdv28HarnessRB(t, false, true)
	if err := h.commit(false, "a/1", "v|", "b/1", "v@1|", "b/2", "v@2|", "a/5", "v|d/*,~a/1"); err != nil {
		t.Fatal(err)
	}
	h.sb.ResetOps()
	if err := h.commit(false, "a/1", "", "b/1", "w@1|", "b/2", "w@2|a/99"); err != nil {
		t.Fatal(err)
	}
	ops := h.sb.OpStrings()
	if !slices.Contains(ops, "create d/1") || !slices.Contains(ops, "delete d/2") {
		t.Fatalf("the test means d/1 back and d/2 gone: ops %v", ops)
	}
	if slices.Contains(ops, "delete a/5") {
		t.Errorf("a/5 was deleted (now %s) although d/1 or d/2 was there at every moment (ops %v)", h.s.GetValueStatus("a/5").State, ops)
	}
	if st := h.s.GetValueStatus("a/5"); st.State != kvscheduler.Configured {
		t.Errorf("a/5 is %s, want CONFIGURED (ops %v)", st.State, ops)
	}
}
