package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv7RequestOfAnObtainedBaseTakesADerivedKeyAnotherBaseHolds: the
// southbound holds b/2 as its own (w@2, which derives d/2), but not d/2;
// d's read says so (d/2 read by its own descriptor: gone). A resync reads
// b/2 (OBTAINED). b/1, requested with a value that derives d/2 too, finds
// the key free, and is created with d/2: d/2 is b/1's, the base judged
// valid when it took the key (rule 8). Then the northbound requests b/2
// with a value that still derives d/2: rule 8 makes it INVALID, and
// nothing of b/1's is deleted under it. Instead b/2, which still lists d/2
// from its read, is applied as if the key were its own: b/1's d/2 is
// deleted and created again as b/2's (fuzz seed 116 of
// -fzdheld, as its delete as INVALID, with -fzprops off).
func TestAdv7RequestOfAnObtainedBaseTakesADerivedKeyAnotherBaseHolds(t *testing.T) {
	sb := kvtest.New()
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
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
		if err := s.RegisterDescriptor(ctx, desc); err != nil {
			t.Fatal(err)
		}
	}
	sb.Set("b/2", "w@2", true)
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartNBTransaction().SetValue("b/1", "w@2").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if st := s.GetValueStatus("d/2"); st.BaseKey != "b/1" || sb.Values()["d/2"] != "dv-w@2" {
		t.Fatalf("b/1 did not take the free d/2: d/2 %s, base %q; southbound %v", st.State, st.BaseKey, sb.Values())
	}
	sb.ResetOps()
	_, err = s.StartNBTransaction().SetValue("b/2", "v@1@2").Commit(ctx)
	st := s.GetValueStatus("d/2")
	if st.BaseKey != "b/1" || sb.Values()["d/2"] != "dv-w@2" {
		t.Errorf("b/1's d/2 was taken by b/2's request: d/2 %s, base %q, holds %v (ops %v; commit error %v; b/1 %s, b/2 %s)",
			st.State, st.BaseKey, sb.Values()["d/2"], sb.OpStrings(), err, s.GetValueStatus("b/1").State, s.GetValueStatus("b/2").State)
	}
}
