package kvscheduler_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Rule 8 makes b/2 INVALID while b/1, another wanted base, derives the key
// it derives. Once b/1 is deleted nothing clashes: b/2 is wanted and
// valid, and "a value should be held exactly when it is wanted, valid,
// and its dependencies are met". The delete of b/1 commits nil, but b/2
// stays INVALID, uncreated, with an error naming a clash with b/1, which
// no longer exists, until some resync happens to apply it (a downstream
// resync does).

func TestAdv3InvalidBaseAppliedWhenTheClashGoes(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b, d := adv3AtDerived(sb)
	register(t, s, b, d)
	mustSet(t, s, "b/1", "v@1")
	wantInvalid(t, set(t, s, "b/2", "w@1"), "b/2")
	mustSet(t, s, "b/1", nil)
	if st := s.GetValueStatus("b/2"); st.State != kvscheduler.Configured {
		t.Fatalf("b/1 is gone, nothing clashes with b/2 any more, yet b/2 is %s (%v); southbound %v", st.State, st.Error, sb.Values())
	}
	wantSB(t, sb, map[string]any{"b/2": "w@1", "d/1": "w@1"})
}
