package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A base the southbound lost behind the scheduler's back, while its
// derived values stayed there, and that the northbound no longer wants: a
// full resync (the desired state now empty) neither deletes the derived
// values the read reports nor forgets the base. The derived values stay in
// the southbound reported CONFIGURED, and the base stays REMOVED, a state
// "sent to watchers only"; further resyncs change nothing.

func TestAdvFullResyncDeletesDerivedValuesOfALostUnwantedBase(t *testing.T) {
	for _, tc := range []struct {
		name     string
		prefixes []string
		setup    func(*kvtest.Southbound) []*kvscheduler.Descriptor
		items    []string
	}{
		{"items claimed by the base's descriptor", []string{"b/"}, func(sb *kvtest.Southbound) []*kvscheduler.Descriptor {
			b := sb.Descriptor("b", "b/") // its Retrieve reports the items too
			b.DerivedValues = refItems
			return []*kvscheduler.Descriptor{b}
		}, []string{"b/1/x", "b/1/y"}},
		{"derived values claimed by their own descriptor", []string{"b/", "d/"}, func(sb *kvtest.Southbound) []*kvscheduler.Descriptor {
			b, d := advBaseDerived(sb)
			return []*kvscheduler.Descriptor{b, d}
		}, []string{"d/1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			sb := kvtest.New()
			s := newSched(t, kvscheduler.Options{})
			register(t, s, tc.setup(sb)...)
			mustSet(t, s, "b/1", "x,y")
			sb.ResetOps()
			sb.Remove("b/1") // lost; its derived values stay

			for i := 0; i < 2; i++ {
				if _, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if got := sb.Values(); len(got) > 0 {
				t.Errorf("after two full resyncs to an empty desired state (ops %v) the southbound holds %v; b/1: %s; %s: %s",
					sb.OpStrings(), got, advState(s, "b/1"), tc.items[0], advState(s, tc.items[0]))
			}
			if st := s.GetValueStatus("b/1"); st.State == kvscheduler.Removed {
				t.Errorf("b/1 stays %s, a state sent to watchers only", st.State)
			}
		})
	}
}

func TestAdvDerivedValueOfALostObtainedBaseIsNotReportedRemoved(t *testing.T) {
	ctx := context.Background()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	b, d := advBaseDerived(sb)
	register(t, s, b, d)
	sb.Set("b/1", "v", true) // the southbound's own values
	sb.Set("d/1", "v", true)
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wantState(t, s, "d/1", kvscheduler.Obtained)

	sb.Remove("b/1")
	for i := 0; i < 2; i++ {
		if _, err := s.StartNBTransaction().WithResync(kvscheduler.FullResync).Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if ops := sb.OpStrings(); len(ops) > 0 {
		t.Fatalf("the resync touched the southbound's own values: %v", ops)
	}
	for _, k := range []string{"b/1", "d/1"} {
		if st := s.GetValueStatus(k); st.State == kvscheduler.Removed {
			_, in := sb.Values()[k]
			t.Errorf("%s stays %s after two resyncs (in the southbound: %v; SB view %v)", k, st.State, in, s.DumpValues("", k, kvscheduler.SBView))
		}
	}
}
