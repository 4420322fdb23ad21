package kvscheduler_test

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A resync scoped to a base the southbound holds with its derived value,
// both unknown to the scheduler, reads the derived value with its own
// descriptor once the base's read derives it (the derived key was not
// among the keys to read): it is known present, not created again, and
// deleted before its base when the base goes. b/3 has the NB key prefix
// and nobody requests it: the scoped resync removes it, as an unscoped
// downstream resync does (TestAdv3ScopedAndDownstreamResyncAgreeOnAStrayValue;
// before, the scoped one left it DISCOVERED and only the next unscoped
// one removed it).
func TestScopedResyncReadsTheDerivedValuesOfABaseItFinds(t *testing.T) {
	ctx := context.Background()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	b, d := advBaseDerived(sb)
	register(t, s, b, d)
	sb.Set("b/3", "v", false) // both appear behind the scheduler's back
	sb.Set("d/3", "v", false)
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys("b/3").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wantOps(t, sb, "delete d/3", "delete b/3")
	wantSB(t, sb, map[string]any{})
	advWantAgree(t, s, sb, "after the scoped resync of b/3", "b/", "d/")
	sb.ResetOps()
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx); err != nil {
		t.Errorf("resync: %v", err)
	}
	wantOps(t, sb)
	wantSB(t, sb, map[string]any{})
}
