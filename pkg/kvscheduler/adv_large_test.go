package kvscheduler_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A base with many derived values (an object with a few thousand items: a
// legitimate input) created into a small graph: the walk's bound, 64
// frames per node of the graph when the walk starts (plus 64), is smaller
// than the walk, which is cut short ("did not end; N operations dropped"
// in TxnRecord.Errors only). Commit returns nil, the base is CONFIGURED,
// and the derived values past the bound are neither created nor known (no
// status).

func TestAdvBaseWithManyDerivedValuesIsAppliedWhole(t *testing.T) {
	const items = 5000
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	b := sb.Descriptor("b", "b/")
	b.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		out := make([]kvscheduler.KeyValuePair, 0, items)
		for i := 0; i < items; i++ {
			out = append(out, kvscheduler.KeyValuePair{Key: fmt.Sprintf("d/%s/%05d", key, i), Value: v})
		}
		return out
	}
	d := sb.Descriptor("d", "d/")
	d.NBKeyPrefix = ""
	register(t, s, b, d)

	rec, err := s.StartNBTransaction().SetValue("b/1", "v").Commit(context.Background())
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	last := fmt.Sprintf("d/b/1/%05d", items-1)
	if got := len(sb.Values()); got != items+1 {
		t.Errorf("Commit returned nil and b/1 is %s, but the southbound holds %d values, want %d; %s: %s; record errors %v",
			advState(s, "b/1"), got, items+1, last, advState(s, last), rec.Errors)
	}
	advWantAgree(t, s, sb, "after the transaction", "b/", "d/")
}
