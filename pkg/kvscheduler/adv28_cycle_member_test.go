package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv28CycleMemberIsNotKeptByAProviderThatOnlyWent attacks
// lacksMember (cyclemember.go), which keeps a cycle member created
// counting on a member that never came when any provider of that
// dependency was touched in the walk ("came and went on its own"). A
// provider the walk only deleted never came. b/5 = v| exists; b/1 = w|a/3
// waits for a/3. One transaction deletes b/5 and sets a/3 = v|~b/*,
// ordered after any b/ value: b/5 goes first, so a/3 and b/1 make a cycle,
// created as a whole, and b/1's create fails. a/3, ordered after b/*,
// is then created while no b/ value exists; docs/kvscheduler.md (cycles;
// TestAdv25CycleMemberLeftWithoutAFailedMemberGoesBackToPending) sends
// such a member back to PENDING.
func TestAdv28CycleMemberIsNotKeptByAProviderThatOnlyWent(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	mustSet(t, s, "b/5", "v|")
	mustSet(t, s, "b/1", "w|a/3")
	wantState(t, s, "b/1", kvscheduler.Pending)
	sb.ResetOps()
	sb.FailNext("create", "b/1", errors.New("injected"))
	_, err := s.StartNBTransaction().SetValue("b/5", nil).SetValue("a/3", "v|~b/*").Commit(context.Background())
	t.Logf("Commit: %v (ops %v)", err, sb.OpStrings())
	held := sb.Values()
	if _, ok := held["b/1"]; ok {
		t.Fatalf("b/1's create did not fail (ops %v)", sb.OpStrings())
	}
	if _, ok := held["b/5"]; ok {
		t.Fatalf("b/5 was not deleted (ops %v)", sb.OpStrings())
	}
	if st := s.GetValueStatus("a/3"); st.State != kvscheduler.Pending {
		t.Errorf("a/3 is %s, ordered after b/*, while no b/ value exists (b/1's create failed, b/5 deleted; ops %v)", st.State, sb.OpStrings())
	}
	advWantAgree(t, s, sb, "after the transaction", "a/", "b/", "d/")
}
