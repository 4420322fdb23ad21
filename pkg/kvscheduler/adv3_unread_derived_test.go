package kvscheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Rule 4: a derived value whose own descriptor (not its base's) has
// Retrieve is read by that descriptor, "that read says whether it
// exists"; rule 7 and safety.md: a failed read is never read as absence.
// The southbound lost b/1 but still holds its derived d/1; a scoped
// repair of b/1 finds b/1 gone while d's read fails, and takes d/1 for
// gone with its base anyway (the scheduler reports it absent). The
// operations decided on it are held in that transaction, but the belief
// stays: the next transaction, requesting x/1 (which Requires d/1) again
// with the value it has, deletes x/1 into PENDING, with Commit nil, while
// d/1 is in the southbound.

func TestAdv3FailedReadOfDerivedValueIsNotAbsenceWithItsBase(t *testing.T) {
	ctx := context.Background()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b, d := advBaseDerived(sb)
	register(t, s, b, d, withKindDeps(sb.Descriptor("x", "x/")))
	mustSet(t, s, "b/1", "v", "x/1", "v|d/1")
	sb.Remove("b/1") // lost; d/1 is still there
	sb.FailNext("retrieve", "d", errors.New("read of d fails"))
	_, rerr := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys("b/1").Commit(ctx)
	after := advSBMismatch(s, sb, "d/")
	sb.ResetOps()
	_, err := s.StartNBTransaction().SetValue("x/1", "v|d/1").Commit(ctx)
	if _, ok := sb.Values()["x/1"]; !ok {
		t.Fatalf("x/1 requested again with its value: Commit %v, ops %v, x/1 %s, deleted while d/1, which it Requires, is in the southbound (%v);\n"+
			"the scoped repair (%v) had left: %s", err, sb.OpStrings(), advState(s, "x/1"), sb.Values(), rerr, strings.Join(after, "; "))
	}
}
