package kvscheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A transaction stopped by its context hands over no derived key on a
// request it never applied (docs/safety.md,
// TestAdv5StoppedTransactionDoesNotHandOverAKeyOnARequestItDidNotApply).
// The same case with a taker deriving two keys: b/1 = v@2 derives d/2.
// One transaction requests b/2 = w@1@2 (deriving d/1, free, and d/2, free
// since b/1 is requested further on with v@1, which no longer derives it)
// and b/1 = v@1; its context ends once b/2 is created. (With a taker that
// derives d/2 alone, TestAdv5StoppedTransactionDoesNotHandOverAKeyOnARequestItDidNotApply's
// fix holds.) b/1's request is
// never applied (and not kept), so b/1 still holds and derives d/2, and
// d/2 goes back to it. Before the fix, the next (empty) transaction
// resumed the stopped one and updated d/2 to b/2's value: two bases, both
// CONFIGURED with no error, derived d/2, and b/1's derived value held
// b/2's value (d/2 still held b/1's value, which was taken for a sign
// that it had been applied to b/2).
func TestAdv8StoppedTransactionHandsOverAKeyToABaseDerivingTwoKeys(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b, d := adv8MultiDerived(sb)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	create := b.Create
	b.Create = func(cctx context.Context, k string, v any) (any, error) {
		md, err := create(cctx, k, v)
		if k == "b/2" {
			cancel() // the caller gives up once b/2 is created
		}
		return md, err
	}
	register(t, s, b, d)
	mustSet(t, s, "b/1", "v@2")
	sb.ResetOps()
	_, _ = s.StartNBTransaction().SetValue("b/2", "w@1@2").SetValue("b/1", "v@1").Commit(ctx)
	eventually(t, "the stopped transaction's record", func() bool {
		recs := s.TransactionHistory(time.Time{}, time.Time{})
		return len(recs) > 0 && recs[len(recs)-1].NotApplied != nil
	})
	stopOps := sb.OpStrings()
	barrier(t, s)
	got := sb.Values()
	st1, st2 := s.GetValueStatus("b/1"), s.GetValueStatus("b/2")
	if got["b/1"] == "v@2" && st1.State == kvscheduler.Configured && st2.State == kvscheduler.Configured {
		t.Fatalf("b/1 (v@2, deriving d/2) and b/2 (w@1@2, deriving d/1 and d/2) are both CONFIGURED; d/2 %s, base %q, the southbound holding %v (southbound %v; ops of the stopped transaction %v, then %v)",
			advState(s, "d/2"), s.GetValueStatus("d/2").BaseKey, got["d/2"], got, stopOps, sb.OpStrings())
	}
}

// adv8MultiDerived returns descriptors b and d: a value "tag@k1@k2" of b
// derives d/k1 and d/k2, each with the value "dv-" and the base's value.
func adv8MultiDerived(sb *kvtest.Southbound) (*kvscheduler.Descriptor, *kvscheduler.Descriptor) {
	b := sb.Descriptor("b", "b/")
	b.DerivedValues = func(_ string, v any) []kvscheduler.KeyValuePair {
		str, _ := v.(string)
		var out []kvscheduler.KeyValuePair
		for _, part := range strings.Split(str, "@")[1:] {
			if part != "" {
				out = append(out, kvscheduler.KeyValuePair{Key: "d/" + part, Value: "dv-" + str})
			}
		}
		return out
	}
	d := sb.Descriptor("d", "d/")
	d.NBKeyPrefix = ""
	return b, d
}
