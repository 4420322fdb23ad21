package kvscheduler_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Unit tests of the leaving set (leaveset.go) on the real scheduler: each
// commits a step and reads the model that step built before it applied
// anything, and checks its marks and that it names exactly the values the
// step's record shows leaving. Values are written as in the adv5 fuzz
// (tag|dep,~orderingdep,prefix*); b/ derives d/<n> for each @<n> of its tag.

// lvHarness is a scheduler whose NB transactions report their models.
type lvHarness struct {
	s  *kvscheduler.Scheduler
	sb *kvtest.Southbound
	mu sync.Mutex
	rs []kvscheduler.LeaveReport
}

func newLvHarness(t *testing.T) *lvHarness {
	t.Helper()
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	h := &lvHarness{s: s, sb: kvtest.New()}
	deps := func(_ string, v any) []kvscheduler.Dependency { _, d := fzParse(v); return d }
	a := h.sb.Descriptor("a", "a/")
	a.Dependencies = deps
	r := h.sb.Descriptor("r", "r/")
	r.Dependencies = deps
	r.UpdateWithRecreate = func(string, any, any, any) bool { return true }
	b := h.sb.Descriptor("b", "b/")
	b.Dependencies = deps
	b.DerivedValues = func(_ string, v any) []kvscheduler.KeyValuePair {
		tag, _ := fzParse(v)
		var out []kvscheduler.KeyValuePair
		for _, part := range strings.Split(tag, "@")[1:] {
			out = append(out, kvscheduler.KeyValuePair{Key: "d/" + part, Value: "dv-" + tag})
		}
		return out
	}
	d := h.sb.Descriptor("d", "d/")
	d.NBKeyPrefix = ""
	for _, desc := range []*kvscheduler.Descriptor{a, r, b, d} {
		if err := s.RegisterDescriptor(context.Background(), desc); err != nil {
			t.Fatal(err)
		}
	}
	kvscheduler.CheckLeaveSets(s, func(r kvscheduler.LeaveReport) {
		h.mu.Lock()
		h.rs = append(h.rs, r)
		h.mu.Unlock()
	})
	return h
}

// step commits kvs (key, value; "" deletes) as one transaction and
// returns its model, which must match its record.
func (h *lvHarness) step(t *testing.T, kvs ...string) kvscheduler.LeaveReport {
	t.Helper()
	h.mu.Lock()
	h.rs = nil
	h.mu.Unlock()
	txn := h.s.StartNBTransaction()
	for i := 0; i+1 < len(kvs); i += 2 {
		var v any
		if kvs[i+1] != "" {
			v = kvs[i+1]
		}
		txn.SetValue(kvs[i], v)
	}
	if _, err := txn.Commit(context.Background()); err != nil {
		t.Fatalf("commit %v: %v", kvs, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.rs) != 1 {
		t.Fatalf("commit %v: %d leave reports, want 1", kvs, len(h.rs))
	}
	r := h.rs[0]
	if msg := leaveMismatch(h.rs); msg != "" {
		t.Fatalf("commit %v: %s", kvs, msg)
	}
	return r
}

// wantLeave checks that key leaves at time at (-1: stays).
func wantLeave(t *testing.T, r kvscheduler.LeaveReport, key string, at int32) {
	t.Helper()
	got, ok := r.Leaves(key)
	switch {
	case at < 0 && ok:
		t.Errorf("%s leaves at %d, want it to stay", key, got)
	case at >= 0 && (!ok || got != at):
		t.Errorf("%s leaves at %d (%v), want %d", key, got, ok, at)
	}
}

// A re-create leaves at 4j and comes back at 4j+2; what Requires it leaves
// with its delete and comes back after it.
func TestLeaveSetRecreateLeavesAt4jComesAt4jPlus2(t *testing.T) {
	h := newLvHarness(t)
	h.step(t, "r/1", "v|", "a/1", "v|r/1")
	r := h.step(t, "r/1", "w|")
	wantLeave(t, r, "r/1", 0)
	wantLeave(t, r, "a/1", 0)
	if c := r.Comes("r/1"); c != 2 {
		t.Errorf("r/1 comes at %d, want 2", c)
	}
	if c := r.Comes("a/1"); c != 2 {
		t.Errorf("a/1 comes at %d, want 2", c)
	}
}

// A value whose Requires pattern matches its own key meets it itself: the
// delete of the pattern's other provider leaves it.
func TestLeaveSetSelfMatchStays(t *testing.T) {
	h := newLvHarness(t)
	h.step(t, "a/2", "v|", "a/1", "v|a/*")
	r := h.step(t, "a/2", "")
	wantLeave(t, r, "a/2", 0)
	wantLeave(t, r, "a/1", -1)
}

// A cycle leaves as a whole when something outside takes one member away,
// and one that nothing outside refutes may come as a whole.
func TestLeaveSetCycles(t *testing.T) {
	h := newLvHarness(t)
	r := h.step(t, "r/1", "v|", "a/1", "v|a/2,r/1", "a/2", "v|a/1")
	for _, k := range []string{"a/1", "a/2"} {
		if c := r.Comes(k); c == math.MaxInt32 {
			t.Errorf("%s does not come; a cycle nothing refutes may come", k)
		}
	}
	r = h.step(t, "r/1", "")
	wantLeave(t, r, "r/1", 0)
	wantLeave(t, r, "a/1", 0)
	wantLeave(t, r, "a/2", 0)
}

// An update that Requires the derived value its own new value no longer
// derives: the derived value leaves at 4j, the update is judged at 4j+1
// and leaves into PENDING (adv5 fuzz seed 2007070's shape).
func TestLeaveSetUpdateRequiringItsObsoleteDerivedValue(t *testing.T) {
	h := newLvHarness(t)
	h.step(t, "b/1", "v@1|")
	r := h.step(t, "b/1", "w|d/1")
	wantLeave(t, r, "d/1", 0)
	wantLeave(t, r, "b/1", 1)
}

// Stopped at its budget, the model names a subset of what the fixpoint
// names, and says that it stopped.
func TestLeaveSetBudgetStopIsASubsetOfTheFixpoint(t *testing.T) {
	h := newLvHarness(t)
	h.step(t, "r/1", "v|", "a/1", "v|r/1", "a/2", "v|a/1", "a/3", "v|a/2", "a/4", "v|a/3")
	r := h.step(t, "r/1", "")
	full := r.Leaving()
	if want := []string{"a/1", "a/2", "a/3", "a/4", "r/1"}; !slices.Equal(full, want) {
		t.Fatalf("the fixpoint's leaving set is %v, want %v", full, want)
	}
	for budget := 1; ; budget++ {
		got, stopped := r.LeavingWithin(budget)
		for _, k := range got {
			if !slices.Contains(full, k) {
				t.Fatalf("budget %d: %s leaves, which the fixpoint keeps", budget, k)
			}
		}
		if !stopped {
			if !slices.Equal(got, full) {
				t.Fatalf("budget %d: not stopped, but leaving %v, want %v", budget, got, full)
			}
			if budget == 1 {
				t.Fatalf("a budget of one evaluation did not stop the model")
			}
			return
		}
		if budget > 1000 {
			t.Fatalf("the model did not end within 1000 evaluations")
		}
	}
}

// The walk applies an update that surely goes (into PENDING) after a later
// update of a value depending on it that the cascade spares (postponeTo),
// and the model's time follows that order (TestRandomGraphs -kvleave seed
// 1195, reduced): a/5's update Requires r/9, which nothing provides, so it
// goes, and its cascade takes b/6 and its derived d/6 away; a/7 needs a/*
// (which it meets itself) and d/*, only d/6. a/7's update (no
// dependencies) is applied first, so a/7 never leaves; by the reference's
// order, a/5 first, a/7 would have gone with d/6 and come back.
func TestLeaveSetFollowsThePostponedUpdate(t *testing.T) {
	h := newLvHarness(t)
	h.step(t, "a/5", "v|")
	h.step(t, "b/6", "v@6|a/5")
	h.step(t, "a/7", "v|a/*,d/*")
	r := h.step(t, "a/5", "w|r/9", "a/7", "w|")
	wantLeave(t, r, "a/7", -1)
	wantLeave(t, r, "a/5", 5)
	wantLeave(t, r, "b/6", 5)
	wantLeave(t, r, "d/6", 5)
}

// A value updated in place to Require a pattern its own new derived value
// matches stays when the pattern's other provider goes: its derived value
// keeps it once created (TestRandomGraphs -kvleave seed 1539, reduced):
// b/3 = v@3|d/* and b/5 drops d/5 further on.
func TestLeaveSetOwnDerivedValueKeepsItsUpdatedBase(t *testing.T) {
	h := newLvHarness(t)
	h.step(t, "b/3", "v|")
	h.step(t, "b/5", "v@5|")
	r := h.step(t, "b/3", "v@3|d/*", "b/5", "w|")
	wantLeave(t, r, "b/3", -1)
	wantLeave(t, r, "d/5", 4)
}

// A value created while another provider covers its Requires pattern is
// kept by its own derived value when that provider goes further on
// (TestRandomGraphs -kvleave seed 1941, reduced): b/4 = v@4|d/* is
// created while d/6 is there, then b/6's update drops d/6 and Requires
// b/4; b/4's d/4 keeps it, so b/6 stays too.
func TestLeaveSetOwnDerivedValueKeepsItsCreatedBase(t *testing.T) {
	h := newLvHarness(t)
	h.step(t, "b/6", "v@6|")
	r := h.step(t, "b/4", "v@4|d/*", "b/6", "w|b/4")
	wantLeave(t, r, "b/4", -1)
	wantLeave(t, r, "b/6", -1)
	wantLeave(t, r, "d/6", 4)
	if c := r.Comes("b/4"); c != 2 {
		t.Errorf("b/4 comes at %d, want 2", c)
	}
}

// A value waiting for a value the step creates is created right after it,
// with its derived values, which a request further on may need
// (TestRandomGraphs -kvleave seed 2397, reduced): b/5 = v@5|a/2 waits for
// a/2; the step creates a/2, then updates a/0 to Require d/5, which b/5
// brings: a/0 stays.
func TestLeaveSetDerivedValueOfAWaitingValueComes(t *testing.T) {
	h := newLvHarness(t)
	h.step(t, "a/0", "v|", "b/5", "v@5|a/2")
	r := h.step(t, "a/2", "v|", "a/0", "w|d/5")
	wantLeave(t, r, "a/0", -1)
	if c := r.Comes("d/5"); c != 3 {
		t.Errorf("d/5 comes at %d, want 3 (after b/5 at 2)", c)
	}
}

// An update the step's earlier create leaves unmet goes as a delete does
// and waits for a later update of a value depending on it
// (TestRandomGraphs -kvleave seed 2472, reduced): a/1 is created PENDING
// (r/9 is missing), b/0's update Requires a/1, and b/2 = v@2|b/0,d/* is
// updated to need nothing: the walk applies b/2's update first, so b/2
// stays, and only then takes b/0 and d/0 away.
func TestLeaveSetUpdateUnmetByAnEarlierCreateIsPostponed(t *testing.T) {
	h := newLvHarness(t)
	h.step(t, "b/0", "v@0|")
	h.step(t, "b/2", "v@2|b/0,d/*")
	r := h.step(t, "a/1", "v|r/9", "b/0", "v@0|a/1", "b/2", "w|")
	wantLeave(t, r, "b/2", -1)
	wantLeave(t, r, "b/0", 9)
	wantLeave(t, r, "d/0", 9)
}
