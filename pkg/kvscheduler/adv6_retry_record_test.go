package kvscheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	clocktesting "k8s.io/utils/clock/testing"
)

// adv6Script runs the steps of an adv5 fuzz seed (the descriptors of
// fzDescs with invalid values and properties) and returns the scheduler,
// the southbound and the records of the transactions since the last
// ResetOps.
type adv6Script struct {
	t   *testing.T
	s   *kvscheduler.Scheduler
	sb  *kvtest.Southbound
	clk *clocktesting.FakeClock
	seq int
	fc  *fzCancel
}

func newAdv6Script(t *testing.T) *adv6Script {
	t.Helper()
	inv, props := *fzInvalid, *fzProps
	*fzInvalid, *fzProps = true, true
	t.Cleanup(func() { *fzInvalid, *fzProps = inv, props })
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s, err := kvscheduler.New(kvscheduler.Options{HistoryMaxCount: 100000, Clock: clk, HistoryTrimPeriod: time.Hour * 1000, HistoryMaxAge: time.Hour * 1000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	sb := kvtest.New()
	fc := &fzCancel{}
	if !*fzCancelAll {
		all := *fzCancelAll
		*fzCancelAll = true
		defer func() { *fzCancelAll = all }()
	}
	for _, d := range fzDescs(sb, fc) {
		if err := s.RegisterDescriptor(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	return &adv6Script{t: t, s: s, sb: sb, clk: clk, seq: -1, fc: fc}
}

// commit commits txn (with retries when retry is set) after stepping the clock by step,
// and checks that the records of the transactions it ran carry the
// operations the southbound saw.
func (x *adv6Script) commit(txn *kvscheduler.Txn, step time.Duration, retry bool) {
	x.t.Helper()
	x.sb.ResetOps()
	if step > 0 {
		x.clk.Step(step)
	}
	if retry {
		txn.WithRetry(kvscheduler.RetryOptions{Period: time.Second, MaxAttempts: 3})
	}
	_, _ = txn.Commit(context.Background())
	var recs []*kvscheduler.TxnRecord
	for _, r := range x.s.TransactionHistory(timeZero, timeZero) {
		if int(r.SeqNum) > x.seq {
			recs = append(recs, r)
			x.seq = int(r.SeqNum)
		}
	}
	if msg := fzCheckRecords(recs, x.sb.Ops(false)); msg != "" {
		var rs []string
		for _, r := range recs {
			rs = append(rs, r.String())
		}
		x.t.Fatalf("%s\n%s", msg, strings.Join(rs, "\n"))
	}
}

func (x *adv6Script) nb(kvs ...any) *kvscheduler.Txn {
	txn := x.s.StartNBTransaction()
	for i := 0; i < len(kvs); i += 2 {
		txn.SetValue(kvs[i].(string), kvs[i+1])
	}
	return txn
}

// TestAdv6RetryRecordsADeleteTheSouthboundNeverSaw: a retry of a failed
// delete (r/2, which d/2, derived from b/1, is ordered after) records the
// delete of d/2 as done, yet the southbound never saw it (adv5 fuzz seed
// 2249 with -fzcancel -fzretry -fzinv -fzprops).
func TestAdv6RetryRecordsADeleteTheSouthboundNeverSaw(t *testing.T) {
	x := newAdv6Script(t)
	inj := errors.New("injected")
	x.sb.FailNext("update", "b/2", inj)
	x.commit(x.s.StartNBTransaction().WithResync(kvscheduler.FullResync), 0, true)
	x.sb.FailNext("delete", "b/1", inj)
	x.commit(x.nb("r/1", "bad|p/2", "b/1", "v@2|", "r/2", "v|~p/2,d/*"), 0, false)
	x.sb.FailNext("create", "r/2", inj)
	x.commit(x.nb("b/2", nil, "b/1", nil).WithRevert(), 0, true)
	x.sb.FailNext("update", "a/2", inj)
	x.commit(x.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys("r/2"), 0, true)
	x.sb.FailNext("delete", "r/2", inj)
	x.commit(x.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys("r/1"), 2*time.Second, true)
	x.sb.Set("b/1", "v@1@2|", true)
	full := x.s.StartNBTransaction().WithResync(kvscheduler.FullResync)
	full.SetValue("r/1", "bad|p/2")
	full.SetValue("r/2", "v|~p/2,d/*")
	x.commit(full, 2*time.Second, true)
	// d/2 (FAILED, derived from b/1, which the southbound replaced by
	// its own) is in the southbound; the retry of r/2's delete records
	// d/2 deleted (FAILED -> REMOVED, no error) and never deletes it: it
	// stays in the southbound, OBTAINED.
	x.sb.FailNext("update", "d/2", inj)
	x.commit(x.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).WithResyncKeys("d/2"), 4*time.Second, true)
}

// TestAdv6FullResyncDeletesAWantedValueOnADerivedValueItNeverDeletes:
// b/1 (deriving d/2, which r/2 Requires) is deleted while r/2's delete
// fails, so the deletes of d/2 and b/1 fail too; the southbound then
// replaces b/1 by its own, and a full resync that still requests r/2
// reads it. The resync drops b/1's delete (its value is the southbound's
// now) and records d/2 deleted, but never deletes it: the southbound
// keeps d/2 while the scheduler reports it NONEXISTENT, and r/2, wanted
// and Requiring d/* which the southbound holds, is deleted and left
// PENDING on d/*.
func TestAdv6FullResyncDeletesAWantedValueOnADerivedValueItNeverDeletes(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/1", "v@2|", "r/2", "v|d/*").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	x.sb.FailNext("delete", "r/2", errors.New("injected"))
	if _, err := x.nb("b/1", nil).Commit(ctx); err == nil {
		t.Fatal("the delete of r/2 did not fail")
	}
	x.sb.Set("b/1", "v@1@2|", true)
	x.sb.ResetOps()
	if _, err := x.nb("r/2", "v|d/*").WithResync(kvscheduler.FullResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	hist := x.s.TransactionHistory(timeZero, timeZero)
	if msg := fzCheckRecords(hist[len(hist)-1:], x.sb.Ops(false)); msg != "" {
		t.Errorf("the resync's record differs from what the southbound saw: %s", msg)
	}
	if d := advSBMismatch(x.s, x.sb, "b/", "d/", "r/"); len(d) > 0 {
		t.Errorf("the scheduler's view differs from the southbound: %v", d)
	}
	if _, ok := x.sb.Values()["d/2"]; ok {
		if _, ok := x.sb.Values()["r/2"]; !ok {
			t.Errorf("r/2, requested by the resync, was deleted though d/2, which it requires, is held (%+v)", x.s.GetValueStatus("r/2"))
		}
	}
}

// TestAdv6DownstreamResyncDeletesAWantedValueWhenTheSouthboundTakesItsBase:
// as above, with a downstream resync that requests nothing, and the
// southbound's own b/1 equal to the one deleted: the resync deletes r/2,
// wanted and Requiring d/*, and leaves it PENDING while the southbound
// holds d/2, which the scheduler reports NONEXISTENT.
func TestAdv6DownstreamResyncDeletesAWantedValueWhenTheSouthboundTakesItsBase(t *testing.T) {
	x := newAdv6Script(t)
	ctx := context.Background()
	if _, err := x.nb("b/1", "v@2|", "r/2", "v|d/*").Commit(ctx); err != nil {
		t.Fatal(err)
	}
	x.sb.FailNext("delete", "r/2", errors.New("injected"))
	if _, err := x.nb("b/1", nil).Commit(ctx); err == nil {
		t.Fatal("the delete of r/2 did not fail")
	}
	x.sb.Set("b/1", "v@2|", true)
	x.sb.ResetOps()
	if _, err := x.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if ops := x.sb.OpStrings(); len(ops) > 0 {
		t.Errorf("the resync of a southbound holding d/2 and r/2, both wanted or the southbound's, ran %v (r/2: %+v)", ops, x.s.GetValueStatus("r/2"))
	}
	if d := advSBMismatch(x.s, x.sb, "b/", "d/", "r/"); len(d) > 0 {
		t.Errorf("the scheduler's view differs from the southbound: %v", d)
	}
}
