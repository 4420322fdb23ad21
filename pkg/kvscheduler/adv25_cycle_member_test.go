package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv25CycleMemberLeftWithoutAFailedMemberGoesBackToPending is
// TestAdv24CycleMemberLeftWithoutAnInvalidMemberGoesBackToPending with a
// member whose create fails instead of one INVALID: b/1 = w|a/3 waits for
// a/3; a/3 = v|~b/1, ordered after b/1, makes a cycle with it, created as
// a whole; b/1's create fails. docs/kvscheduler.md (cycles): a member
// left without a member that could not be created after all goes back to
// PENDING, one ordered after it too. a/3 must not stay CONFIGURED while
// b/1, which it is ordered after, does not exist.
func TestAdv25CycleMemberLeftWithoutAFailedMemberGoesBackToPending(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	mustSet(t, s, "b/1", "w|a/3")
	wantState(t, s, "b/1", kvscheduler.Pending)
	sb.ResetOps()
	sb.FailNext("create", "b/1", errors.New("injected"))
	_, err := s.StartNBTransaction().SetValue("a/3", "v|~b/1").Commit(context.Background())
	t.Logf("Commit: %v (ops %v)", err, sb.OpStrings())
	if _, held := sb.Values()["b/1"]; held {
		t.Fatalf("b/1's create did not fail (ops %v)", sb.OpStrings())
	}
	if st := s.GetValueStatus("a/3"); st.State != kvscheduler.Pending {
		t.Errorf("a/3 is %s, ordered after b/1, whose create failed (ops %v)", st.State, sb.OpStrings())
	}
	advWantAgree(t, s, sb, "after the transaction", "a/", "b/", "d/")
}
