package kvscheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Clashes are judged on the values the transaction requests (clash.go): a
// base requested further on with a value that no longer derives a key
// leaves it free. A transaction stopped by its context before that
// request applies nothing more, and the request is not kept (a downstream
// resync re-applies the value from before): the key was taken on a
// request that never happened. The next transaction resumes the stopped
// one's work and hands the key over anyway: two held bases derive one key,
// both reported CONFIGURED with no error, and the old base's derived value
// holds the new base's value. The next downstream resync then makes the
// new base INVALID and deletes it, though nothing changed since.
//
// b/1 = v@1 derives d/1. One transaction requests b/0 = w@1 (deriving d/1:
// free, since b/1 is requested further on with v@2) and b/1 = v@2; its
// context ends once b/0 is created (d/1 and b/1 not applied). An empty
// transaction resumes b/0's derived values: d/1 is updated to w@1, while
// b/1 holds v@1 (which derives d/1 = v@1), CONFIGURED.
// Fixed: the stop gives the key back to the base whose later request it
// never applied (takeback.go giveBackUnapplied), and the resume judges the
// taker's clash as an update does (fail.go resume): b/0 INVALID.

func TestAdv5StoppedTransactionDoesNotHandOverAKeyOnARequestItDidNotApply(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	b, d := adv3AtDerived(sb)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	create := b.Create
	b.Create = func(cctx context.Context, k string, v any) (any, error) {
		md, err := create(cctx, k, v)
		if k == "b/0" {
			cancel() // the caller gives up once b/0 is created
		}
		return md, err
	}
	register(t, s, b, d)
	mustSet(t, s, "b/1", "v@1")
	sb.ResetOps()
	_, _ = s.StartNBTransaction().SetValue("b/0", "w@1").SetValue("b/1", "v@2").Commit(ctx)
	eventually(t, "the stopped transaction's record", func() bool {
		recs := s.TransactionHistory(time.Time{}, time.Time{})
		return len(recs) > 0 && recs[len(recs)-1].NotApplied != nil
	})
	barrier(t, s)
	got := sb.Values()
	st1 := s.GetValueStatus("b/1")
	if got["b/1"] == "v@1" && st1.State == kvscheduler.Configured && got["d/1"] != "v@1" {
		afterBarrier := sb.OpStrings()
		d1, d1Base, b0 := advState(s, "d/1"), s.GetValueStatus("d/1").BaseKey, advState(s, "b/0")
		_, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(context.Background())
		t.Fatalf("after the stopped transaction and an empty one (ops %v): b/1 holds v@1, CONFIGURED, which derives d/1 = v@1, "+
			"yet d/1 holds %v (%s, base %s); b/0 %s. A downstream resync then: %v, ops %v, southbound %v, b/0 %s",
			afterBarrier, got["d/1"], d1, d1Base, b0,
			err, sb.OpStrings(), sb.Values(), advState(s, "b/0"))
	}
}
