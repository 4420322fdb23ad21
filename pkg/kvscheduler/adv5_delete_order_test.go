package kvscheduler_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// The delete order (deleteorder.go, docs/kvscheduler.md "Two kinds of
// dependency"): "a value is deleted after the values that depend on it, of
// either kind, whose delete the same transaction has under way or still to
// do", "whatever takes a value away". deleteDueDependents looks for the
// dependent's delete among the transaction's own deletes only (w.dels, the
// requests of nil): a dependent the transaction takes away otherwise, by a
// request further on that is not a delete, goes after what it is ordered
// after. Fixed: such a delete is postponed until that request is applied
// (deletepostpone.go postponeTo, process.go applyValues).

// adv5WantDeletedBefore fails unless the southbound saw "delete first"
// before "delete then".
func adv5WantDeletedBefore(t *testing.T, sb *kvtest.Southbound, first, then string) {
	t.Helper()
	ops := sb.OpStrings()
	i, j := slices.Index(ops, "delete "+first), slices.Index(ops, "delete "+then)
	if i < 0 || j < 0 || i > j {
		t.Fatalf("ops %v: want %s, ordered after %s, deleted before it", ops, first, then)
	}
}

func TestAdv5DependentTakenAwayByALaterRequestIsDeletedFirst(t *testing.T) {
	// d/1, ordered after a/1, is derived from b/1 = v@1. One transaction
	// deletes a/1 and requests b/1 = v@2, which derives d/2 instead: d/1
	// goes as an obsolete derived value of b/1's update, after a/1.
	t.Run("obsolete derived value", func(t *testing.T) {
		s := newSched(t, kvscheduler.Options{})
		sb := kvtest.New()
		b, d := adv3AtDerived(sb)
		d.Dependencies = func(k string, _ any) []kvscheduler.Dependency {
			if k == "d/1" {
				return []kvscheduler.Dependency{{Key: "a/1", Kind: kvscheduler.OrderingOnly}}
			}
			return nil
		}
		register(t, s, sb.Descriptor("a", "a/"), b, d)
		mustSet(t, s, "a/1", "x", "b/1", "v@1")
		sb.ResetOps()
		mustSet(t, s, "a/1", nil, "b/1", "v@2")
		adv5WantDeletedBefore(t, sb, "d/1", "a/1")
	})
	// y/1, ordered after a/1, is requested in the transaction that deletes
	// a/1 with a value that also Requires z/1 (absent): it is deleted into
	// PENDING by its own update, after a/1.
	t.Run("update into PENDING", func(t *testing.T) {
		s := newSched(t, kvscheduler.Options{})
		sb := kvtest.New()
		y := sb.Descriptor("y", "y/")
		y.Dependencies = func(_ string, v any) []kvscheduler.Dependency {
			out := []kvscheduler.Dependency{{Key: "a/1", Kind: kvscheduler.OrderingOnly}}
			if s, _ := v.(string); strings.HasPrefix(s, "needs-z") {
				out = append(out, kvscheduler.Dependency{Key: "z/1"})
			}
			return out
		}
		register(t, s, sb.Descriptor("a", "a/"), y)
		mustSet(t, s, "a/1", "x", "y/1", "v")
		sb.ResetOps()
		mustSet(t, s, "a/1", nil, "y/1", "needs-z")
		wantState(t, s, "y/1", kvscheduler.Pending)
		adv5WantDeletedBefore(t, sb, "y/1", "a/1")
	})
}
