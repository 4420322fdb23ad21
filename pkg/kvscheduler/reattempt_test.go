package kvscheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestSameFailedValueRequestedAgain: a value whose last operation failed
// and that a new transaction requests again with the very value it failed
// with is attempted again, as in the reference, where only a failure in the
// same transaction stops a value: requesting it again is how a caller
// without retries (or whose Commit's context ended in the callback) asks
// for it once more, and nothing else would attempt it before a resync.
func TestSameFailedValueRequestedAgain(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, s *kvscheduler.Scheduler, sb *kvtest.Southbound) // leaves a/1 FAILED
		value any                                                                 // requested again
		ops   []string
		want  map[string]any
	}{
		{
			name: "create cut short by its Commit's context",
			setup: func(t *testing.T, s *kvscheduler.Scheduler, sb *kvtest.Southbound) {
				block := sb.BlockNext("create", "a/1")
				t.Cleanup(block.Release)
				ctx, cancel := context.WithCancel(context.Background())
				committed := commitAsync(ctx, s.StartNBTransaction().SetValue("a/1", "x"))
				await(t, "the create of a/1", block.Entered())
				cancel()
				if err := await(t, "Commit", committed).err; !errors.Is(err, context.Canceled) {
					t.Fatalf("Commit: %v, want context.Canceled", err)
				}
			},
			value: "x",
			ops:   []string{"create a/1"},
			want:  map[string]any{"a/1": "x"},
		},
		{
			name: "update",
			setup: func(t *testing.T, s *kvscheduler.Scheduler, sb *kvtest.Southbound) {
				mustSet(t, s, "a/1", "x")
				sb.FailNext("update", "a/1", boom)
				_ = set(t, s, "a/1", "y")
			},
			value: "y",
			ops:   []string{"update a/1"},
			want:  map[string]any{"a/1": "y"},
		},
		{
			name: "delete",
			setup: func(t *testing.T, s *kvscheduler.Scheduler, sb *kvtest.Southbound) {
				mustSet(t, s, "a/1", "x")
				sb.FailNext("delete", "a/1", boom)
				_ = set(t, s, "a/1", nil)
			},
			value: nil,
			ops:   []string{"delete a/1"},
			want:  map[string]any{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSched(t, kvscheduler.Options{})
			sb := kvtest.New()
			register(t, s, sb.Descriptor("a", "a/"))
			tc.setup(t, s, sb)
			wantState(t, s, "a/1", kvscheduler.Failed)
			sb.ResetOps()
			if err := set(t, s, "a/1", tc.value); err != nil {
				t.Fatalf("requested again: %v", err)
			}
			wantOps(t, sb, tc.ops...)
			wantSB(t, sb, tc.want)
			if st := s.GetValueStatus("a/1"); st.State == kvscheduler.Failed || st.Error != nil {
				t.Fatalf("a/1 after it was requested again: %+v", st)
			}
		})
	}
}

// TestSameBaseRequestedAgainAttemptsFailedDerived: requesting a base again
// with its value attempts again its derived value whose create failed.
func TestSameBaseRequestedAgainAttemptsFailedDerived(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	a.DerivedValues = func(k string, v any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "b/" + strings.TrimPrefix(k, "a/"), Value: v}}
	}
	register(t, s, a, sb.Descriptor("b", "b/"))
	sb.FailNext("create", "b/1", errors.New("boom"))
	_ = set(t, s, "a/1", "x")
	wantState(t, s, "b/1", kvscheduler.Failed)
	sb.ResetOps()
	mustSet(t, s, "a/1", "x")
	wantOps(t, sb, "create b/1")
	wantSB(t, sb, map[string]any{"a/1": "x", "b/1": "x"})
}
