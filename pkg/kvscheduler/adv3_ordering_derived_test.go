package kvscheduler_test

import (
	"slices"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// docs/kvscheduler.md, "Two kinds of dependency": when a value and its
// ordering-only dependent are deleted in one transaction, "the dependent
// is deleted first". orderDeletes orders only the transaction's own
// deletes by key: a derived value deleted with its base is not among
// them, so a dependent ordered after a derived value is deleted after it
// when the base's key sorts first.

func TestAdv3OrderingOnlyOnDerivedValueDeletedFirst(t *testing.T) {
	advOpen(t, "an ordering-only dependent of a derived value, deleted with the base in one transaction, is deleted after the derived value")
	s, sb := adv3OrderingDerived(t)
	mustSet(t, s, "b/1", "v", "x/1", "v|~d/1")
	wantOps(t, sb, "create b/1", "create d/1", "create x/1")
	mustSet(t, s, "b/1", nil, "x/1", nil)
	ops := sb.OpStrings()
	ix, id := slices.Index(ops, "delete x/1"), slices.Index(ops, "delete d/1")
	if ix < 0 || id < 0 || ix > id {
		t.Fatalf("ops %v: the ordering-only dependent x/1 must be deleted before d/1, which it is ordered after", ops)
	}
}

func adv3OrderingDerived(t *testing.T) (*kvscheduler.Scheduler, *kvtest.Southbound) {
	t.Helper()
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b, d := advBaseDerived(sb)
	register(t, s, b, d, withKindDeps(sb.Descriptor("x", "x/")))
	return s, sb
}
