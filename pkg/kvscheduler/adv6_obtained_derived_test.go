package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestAdv6SouthboundsOwnValueUnderADerivedKeyIsNeverDeleted: the
// southbound holds d/2 as its own (origin FromSB) before any read. A base
// b/1 deriving d/1 and d/2 is requested: the create of d/2 fails (it
// exists), and the read-back after the failure reports it as the
// southbound's. Rule 8 makes b/1 INVALID for a key the southbound holds as
// its own, and the scheduler never deletes what it did not create; yet it
// keeps d/2 as b/1's derived value (retrying its create), and the delete of
// b/1 deletes the southbound's own d/2.
func TestAdv6SouthboundsOwnValueUnderADerivedKeyIsNeverDeleted(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	x.sb.Set("d/2", "v|", true)
	if _, err := x.nb("b/1", "w@1@2|").Commit(ctx); err == nil {
		t.Fatal("the create of d/2, which the southbound holds, did not fail")
	}
	st := x.s.GetValueStatus("d/2")
	x.sb.ResetOps()
	if _, err := x.nb("b/1", nil).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if v, ok := x.sb.Values()["d/2"]; !ok || v != "v|" {
		t.Errorf("the southbound's own d/2 was deleted or overwritten (ops %v; held %v, %v; d/2 was %s, base %q, error %v)", x.sb.OpStrings(), v, ok, st.State, st.BaseKey, st.Error)
	}
}

// TestAdv6ResyncNeverOverwritesTheSouthboundsOwnValueUnderADerivedKey: as
// above, the create of d/2 (b/1's update now derives it) fails on the
// southbound's own d/2; a downstream resync, which reads d/2 as the
// southbound's, overwrites it with b/1's derived value: a value taken
// over that nobody asked to take over.
func TestAdv6ResyncNeverOverwritesTheSouthboundsOwnValueUnderADerivedKey(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/1", "w@1|").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	x.sb.Set("d/2", "v|", true)
	if _, err := x.nb("b/1", "w@1@2|").Commit(ctx); err == nil {
		t.Fatal("the create of d/2, which the southbound holds, did not fail")
	}
	x.sb.ResetOps()
	// The resync requests b/1 again: rule 8 makes it INVALID for the key
	// the southbound holds as its own, and the resync fails naming it.
	_, err := x.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx)
	if err == nil || !strings.Contains(err.Error(), "b/1 derives d/2, which the southbound holds as its own") {
		t.Errorf("the resync did not fail for b/1's clash on d/2: %v", err)
	}
	if st := x.s.GetValueStatus("b/1"); st.State != kvscheduler.Invalid {
		t.Errorf("b/1, which derives the southbound's own d/2, is %s, not INVALID", st.State)
	}
	if st := x.s.GetValueStatus("d/2"); st.State != kvscheduler.Obtained || st.BaseKey != "" {
		t.Errorf("the southbound's own d/2 is %s with base %q, not OBTAINED", st.State, st.BaseKey)
	}
	if v := x.sb.Values()["d/2"]; v != "v|" {
		st := x.s.GetValueStatus("d/2")
		t.Errorf("the southbound's own d/2 is now %v (ops %v; d/2 %s, base %q)", v, x.sb.OpStrings(), st.State, st.BaseKey)
	}
}
