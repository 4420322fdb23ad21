package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A key two descriptors claim ("a", prefix x/, and "a2", key x/1: both
// registered before any value, so the registration is accepted). A
// request of x/1 is INVALID ("key claimed by more than one descriptor"),
// rightly. The southbound then holds x/1 (made by hand, or by an earlier
// run). A full resync reads it, yet reports it NONEXISTENT, leaves it out
// of the SB view, and commits nil with no error in its record: the value
// the read reported is taken for "nothing exists". (Without the earlier
// request, the same resync reports it OBTAINED, as held.) Requested again,
// x/1 is INVALID with last operation DELETE, though no Delete ran and the
// southbound still holds it.

func TestAdv4ValueOfTwoDescriptorsReadIsNotTakenForAbsent(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := sb.Descriptor("a", "x/")
	a2 := sb.Descriptor("a2", "x/1")
	a2.NBKeyPrefix = ""
	register(t, s, a, a2)
	wantInvalid(t, set(t, s, "x/1", "v"), "x/1")
	sb.Set("x/1", "pre", false)
	rec, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).Commit(context.Background())
	if d := advSBMismatch(s, sb, "x/"); len(d) > 0 && err == nil {
		t.Errorf("full resync: Commit nil (record errors %v), ops %v, yet %v", rec.Errors, sb.OpStrings(), d)
	}
	_, err = s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue("x/1", "v").Commit(context.Background())
	st := s.GetValueStatus("x/1")
	if st.LastOp == kvscheduler.OpDelete && sb.Values()["x/1"] != nil {
		t.Errorf("requested again: x/1 %s, last op DELETE, yet no Delete ran (ops %v) and the southbound holds %v; Commit %v",
			st.State, sb.OpStrings(), sb.Values(), err)
	}
}
