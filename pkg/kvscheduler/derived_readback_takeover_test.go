package kvscheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// newDerivedPair returns a scheduler with base values b/ (b/N=tag@1@2
// derives d/1 and d/2, "dv-"+tag) and derived values d/ that their own
// descriptor reads, over kvtest's southbound.
func newDerivedPair(t *testing.T) (*kvscheduler.Scheduler, *kvtest.Southbound) {
	t.Helper()
	sb := kvtest.New()
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	b := sb.Descriptor("b", "b/")
	b.DerivedValues = func(_ string, v any) []kvscheduler.KeyValuePair {
		var out []kvscheduler.KeyValuePair
		for _, part := range strings.Split(v.(string), "@")[1:] {
			out = append(out, kvscheduler.KeyValuePair{Key: "d/" + part, Value: "dv-" + v.(string)})
		}
		return out
	}
	d := sb.Descriptor("d", "d/")
	d.NBKeyPrefix = ""
	for _, desc := range []*kvscheduler.Descriptor{b, d} {
		if err := s.RegisterDescriptor(context.Background(), desc); err != nil {
			t.Fatal(err)
		}
	}
	return s, sb
}

// TestBaseThatLostATakenKeyToAReadBackDerivesItAgain: b/2=v@1 holds d/1;
// one transaction requests b/2=w (which no longer derives d/1) and
// b/1=w@1, which takes d/1 over. The update of d/1 to b/1's value fails,
// and so does b/2's update: the southbound holds b/2=v@1 and its d/1, and
// the read-back gives d/1 back to b/2, whose value there derives it. The
// next request of b/2=w deletes d/1 as b/2's obsolete derived value; b/1,
// still CONFIGURED, must then derive it again, not stay CONFIGURED
// without it (adv5 fuzz seed 226 of -fzdheld -fznoownedr -fzretry -fzdd).
func TestBaseThatLostATakenKeyToAReadBackDerivesItAgain(t *testing.T) {
	s, sb := newDerivedPair(t)
	ctx := context.Background()
	if _, err := s.StartNBTransaction().SetValue("b/2", "v@1").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	injected := errors.New("injected")
	sb.FailNext("update", "d/1", injected)
	sb.FailNext("update", "b/2", injected)
	if _, err := s.StartNBTransaction().SetValue("b/2", "w").SetValue("b/1", "w@1").Commit(ctx); err == nil {
		t.Fatal("the transaction whose updates failed did not fail")
	}
	sb.ResetOps()
	_, err := s.StartNBTransaction().SetValue("b/2", "w").Commit(ctx)
	st, d1 := s.GetValueStatus("b/1"), s.GetValueStatus("d/1")
	if v := sb.Values()["d/1"]; st.State == kvscheduler.Configured && v != "dv-w@1" {
		t.Errorf("b/1 CONFIGURED (w@1) but the southbound holds d/1 = %v (d/1 %s, base %q; ops %v; commit error %v)",
			v, d1.State, d1.BaseKey, sb.OpStrings(), err)
	}
	if st.State != kvscheduler.Configured || d1.BaseKey != "b/1" {
		t.Errorf("b/1 is %s (%v), d/1 %s with base %q: b/1 did not derive d/1 again once b/2 let it go (ops %v)",
			st.State, st.Error, d1.State, d1.BaseKey, sb.OpStrings())
	}
}
