package kvscheduler_test

import (
	"slices"
	"strings"
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

// The same through a Requires cascade: x/1 is ordered after a/2, which
// Requires a/1; deleting a/1 and x/1 in one transaction takes a/2 down
// (PENDING) with a/1, so both a/2 and its ordering-only dependent are
// deleted in the transaction, and the dependent goes last.
func TestAdv3OrderingOnlyOnCascadedValueDeletedFirst(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, withKindDeps(sb.Descriptor("a", "a/")), withKindDeps(sb.Descriptor("x", "x/")))
	mustSet(t, s, "a/1", "v", "a/2", "v|a/1", "x/1", "v|~a/2")
	wantOps(t, sb, "create a/1", "create a/2", "create x/1")
	mustSet(t, s, "a/1", nil, "x/1", nil)
	ops := sb.OpStrings()
	ix, i2 := slices.Index(ops, "delete x/1"), slices.Index(ops, "delete a/2")
	if ix < 0 || i2 < 0 || ix > i2 {
		t.Fatalf("ops %v: the ordering-only dependent x/1 must be deleted before a/2, which it is ordered after", ops)
	}
}

// The other way round: the derived value is the ordering-only dependent.
// z/1 derives d/1, which is ordered after a/y; deleting a/y and z/1 in one
// transaction deletes a/y first (key order), and d/1 with its base after.
func TestAdv3DerivedOrderingOnlyDependentDeletedFirst(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	z := sb.Descriptor("z", "z/")
	z.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "d/" + strings.TrimPrefix(key, "z/"), Value: "v|~a/y"}}
	}
	d := withKindDeps(sb.Descriptor("d", "d/"))
	d.NBKeyPrefix = ""
	register(t, s, sb.Descriptor("a", "a/"), z, d)
	mustSet(t, s, "a/y", "v", "z/1", "v")
	wantOps(t, sb, "create a/y", "create z/1", "create d/1")
	mustSet(t, s, "a/y", nil, "z/1", nil)
	ops := sb.OpStrings()
	id, iy := slices.Index(ops, "delete d/1"), slices.Index(ops, "delete a/y")
	if id < 0 || iy < 0 || id > iy {
		t.Fatalf("ops %v: the derived value d/1, ordered after a/y, must be deleted before it", ops)
	}
}

// With a cycle: a/1 and a/2 Require each other, a/3 is ordered after a/1;
// all three deleted in one transaction. orderDeletes puts a/2 first (the
// cycle), and a/2's cascade deletes a/1, its Requires dependent, without
// first deleting a/1's ordering-only dependent a/3: a/3 goes last.
func TestAdv3OrderingOnlyDependentOfACycleDeletedFirst(t *testing.T) {
	s, sb := kindSched(t)
	mustSet(t, s, "a/1", "v|a/2", "a/2", "v|a/1", "a/3", "v|~a/1")
	wantOps(t, sb, "create a/2", "create a/1", "create a/3")
	mustSet(t, s, "a/1", nil, "a/2", nil, "a/3", nil)
	ops := sb.OpStrings()
	i1, i3 := slices.Index(ops, "delete a/1"), slices.Index(ops, "delete a/3")
	if i1 < 0 || i3 < 0 || i3 > i1 {
		t.Fatalf("ops %v: a/3, ordered after a/1, must be deleted before it", ops)
	}
}
