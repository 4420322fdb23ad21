package kvscheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestSouthboundsBaseKeepsTheDerivedValuesItsReadFindsFirst: b/1 (deriving
// d/2, which r/2 Requires) is deleted while r/2's delete fails, so the
// deletes of d/2 and b/1 fail too; the southbound then puts its own b/1
// there. d/2's own descriptor reads before b/1's (it is registered first),
// so d/2 is found while its failed delete still blocks it. The resync
// drops b/1's delete as done (rule 4), and d/2's with it: d/2 is the
// southbound's b/1's derived value, held, and r/2, wanted, stays with it.
// (adv6_retry_record_test.go has the same defect with b/1 read first.)
func TestSouthboundsBaseKeepsTheDerivedValuesItsReadFindsFirst(t *testing.T) {
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	sb := kvtest.New()
	deps := func(_ string, v any) []kvscheduler.Dependency { _, d := fzParse(v); return d }
	b := sb.Descriptor("b", "b/")
	b.Dependencies = deps
	b.DerivedValues = func(_ string, v any) []kvscheduler.KeyValuePair {
		tag, _ := fzParse(v)
		return []kvscheduler.KeyValuePair{{Key: "d/2", Value: "dv-" + tag}}
	}
	d := sb.Descriptor("d", "d/")
	d.NBKeyPrefix = ""
	r := sb.Descriptor("r", "r/")
	r.Dependencies = deps
	ctx := context.Background()
	for _, desc := range []*kvscheduler.Descriptor{d, b, r} {
		if err := s.RegisterDescriptor(ctx, desc); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.StartNBTransaction().SetValue("b/1", "v|").SetValue("r/2", "v|d/*").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	sb.FailNext("delete", "r/2", errors.New("injected"))
	if _, err := s.StartNBTransaction().SetValue("b/1", nil).Commit(ctx); err == nil {
		t.Fatal("the delete of r/2 did not fail")
	}
	if st := s.GetValueStatus("d/2"); st.State != kvscheduler.Failed || st.LastOp != kvscheduler.OpDelete {
		t.Fatalf("d/2 is %s (last op %s), want its delete FAILED", st.State, st.LastOp)
	}
	sb.Set("b/1", "v|", true)
	sb.ResetOps()
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if ops := sb.OpStrings(); len(ops) > 0 {
		t.Errorf("the resync ran %v; the southbound holds b/1, d/2 and r/2 as wanted or as its own", ops)
	}
	if st := s.GetValueStatus("d/2"); st.State != kvscheduler.Obtained || st.BaseKey != "b/1" || st.Error != nil {
		t.Errorf("d/2 is %s (base %q, error %v), want OBTAINED as the southbound's b/1 derives it", st.State, st.BaseKey, st.Error)
	}
	if st := s.GetValueStatus("r/2"); st.State != kvscheduler.Configured {
		t.Errorf("r/2, wanted and Requiring d/*, which the southbound holds, is %s (unmet %v)", st.State, st.UnmetDependencies)
	}
	if d := advSBMismatch(s, sb, "b/", "d/", "r/"); len(d) > 0 {
		t.Errorf("the scheduler's view differs from the southbound: %v", d)
	}
}
