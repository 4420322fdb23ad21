package kvscheduler_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	clocktesting "k8s.io/utils/clock/testing"
)

// The rules of issue 13 that the random test (random_test.go) does not
// pin down one by one: each test names its rule.

// ifaceWithAddrs derives "addr/<name>/<v>" from "if/<name>" for every
// comma-separated v of its value.
func ifaceWithAddrs(sb *kvtest.Southbound) *kvscheduler.Descriptor {
	d := sb.Descriptor("if", "if/")
	d.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		var out []kvscheduler.KeyValuePair
		for _, a := range strings.Split(v.(string), ",") {
			if a != "" {
				out = append(out, kvscheduler.KeyValuePair{Key: "addr/" + strings.TrimPrefix(key, "if/") + "/" + a, Value: a})
			}
		}
		return out
	}
	return d
}

// Rule 1: obsolete derived values go before their base is updated, the base
// is updated before its new derived values are created.
func TestRuleOrderInsideAValuesChange(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, ifaceWithAddrs(sb), sb.Descriptor("addr", "addr/"))
	mustSet(t, s, "if/a", "x")
	sb.ResetOps()
	mustSet(t, s, "if/a", "y")
	wantOps(t, sb, "delete addr/a/x", "update if/a", "create addr/a/y")
}

// Rule 1: the dependents a create makes ready are created right after it,
// before the next value of the transaction.
func TestRuleDependentsRightAfterTheirDependency(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, withDeps(sb.Descriptor("a", "a/")), withDeps(sb.Descriptor("b", "b/")))
	mustSet(t, s, "b/9", "w|a/1")
	mustSet(t, s, "a/1", "x", "b/1", "y")
	wantOps(t, sb, "create a/1", "create b/9", "create b/1")
}

// Rule 2: Retrieve returns base values and the derived values are rebuilt
// from them: a derived value that exists with its base is not created
// again, and one the base no longer derives is deleted.
func TestRuleDerivedValuesRebuiltFromRetrievedBase(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	addr := sb.Descriptor("addr", "addr/")
	addr.Retrieve, addr.RetrieveKeys = nil, nil // the reference's contract: only bases are read
	register(t, s, ifaceWithAddrs(sb), addr)
	sb.Set("if/a", "x", false)
	sb.Set("addr/a/x", "x", false)
	resync(t, s, kvscheduler.FullResync, "if/a", "x")
	wantOps(t, sb) // nothing created again
	wantState(t, s, "addr/a/x", kvscheduler.Configured)
	mustSet(t, s, "if/a", "y")
	wantOps(t, sb, "delete addr/a/x", "update if/a", "create addr/a/y")
}

// Rule 3: after failed operations, the bases of the failed values are read
// back, with the derived values the scheduler knows of theirs (addr/a/z,
// which if/a's new value derives), one read per descriptor, so that the
// retry starts from what the southbound holds.
func TestRuleFailuresReadBackTheirBasesOncePerDescriptor(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	iface, addr := ifaceWithAddrs(sb), sb.Descriptor("addr", "addr/")
	var mu sync.Mutex
	reads := map[string][][]string{}
	for _, d := range []*kvscheduler.Descriptor{iface, addr} {
		name, rk := d.Name, d.RetrieveKeys
		d.RetrieveKeys = func(ctx context.Context, keys []string, c []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
			mu.Lock()
			reads[name] = append(reads[name], keys)
			mu.Unlock()
			return rk(ctx, keys, c)
		}
	}
	register(t, s, iface, addr)
	mustSet(t, s, "if/a", "x,y")
	sb.FailNext("delete", "addr/a/x", errors.New("busy"))
	sb.FailNext("delete", "addr/a/y", errors.New("busy"))
	if err := set(t, s, "if/a", "z"); err == nil {
		t.Fatal("no error")
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string][][]string{"if": {{"if/a"}}, "addr": {{"addr/a/x", "addr/a/y", "addr/a/z"}}}
	if !reflect.DeepEqual(reads, want) {
		t.Fatalf("reads after the failures %v, want %v", reads, want)
	}
}

// Rule 4: the first full resync correlates against the transaction's
// values (without metadata), later ones against the values in the graph
// (with their metadata).
func TestRuleFirstFullResyncCorrelatesWithTheTransaction(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d := sb.Descriptor("a", "a/")
	var got [][]kvscheduler.KVWithMetadata
	retrieve := d.Retrieve
	d.Retrieve = func(ctx context.Context, c []kvscheduler.KVWithMetadata) ([]kvscheduler.KVWithMetadata, error) {
		got = append(got, c)
		return retrieve(ctx, c)
	}
	register(t, s, d)
	sb.Set("a/1", "old", false)
	resync(t, s, kvscheduler.FullResync, "a/1", "new")
	resync(t, s, kvscheduler.FullResync, "a/1", "new")
	if len(got) != 2 {
		t.Fatalf("%d retrieves", len(got))
	}
	if first := got[0]; len(first) != 1 || first[0].Key != "a/1" || first[0].Value != "new" || first[0].Metadata != nil {
		t.Fatalf("first resync correlated with %+v, want the transaction's value without metadata", first)
	}
	if later := got[1]; len(later) != 1 || later[0].Value != "new" || later[0].Metadata == nil {
		t.Fatalf("later resync correlated with %+v, want the applied value with its metadata", later)
	}
}

// Rule 6: notifications for keys the northbound manages are ignored.
func TestRuleNotificationsForNBValuesAreIgnored(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	mustSet(t, s, "a/1", "mine")
	mm, _ := s.MetadataMap("a")
	md, _ := mm.Get("1")
	sb.ResetOps()
	if err := s.PushSBNotification("a/1", "theirs", "md"); err != nil {
		t.Fatal(err)
	}
	barrier(t, s)
	wantOps(t, sb) // not taken as a change to undo
	wantState(t, s, "a/1", kvscheduler.Configured)
	if got, _ := mm.Get("1"); got != md {
		t.Fatalf("metadata %v, want %v", got, md)
	}
	if v := s.DumpValues("", "a/1", kvscheduler.SBView); len(v) != 1 || v[0].Value != "mine" || v[0].Origin != kvscheduler.FromNB {
		t.Fatalf("southbound view %+v", v)
	}
}

// Rule 7: records say what happened: values left waiting (NOOP), properties,
// retries with their attempt and original transaction, the previous error.
func TestRuleRecordsCarryWhatHappened(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk})
	sb := kvtest.New()
	a := withDeps(sb.Descriptor("a", "a/"))
	a.DerivedValues = func(k string, v any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "prop/" + k, Value: true}}
	}
	register(t, s, a)
	ctx := context.Background()
	rec, err := s.StartNBTransaction().SetValue("a/2", "x|a/9").Commit(ctx)
	if err != nil || len(rec.Executed) != 1 || !rec.Executed[0].NOOP || rec.Executed[0].NewState != kvscheduler.Pending {
		t.Fatalf("pending value: %v %+v", err, rec.Executed)
	}
	sb.FailNext("create", "a/1", errors.New("boom"))
	rec, err = s.StartNBTransaction().SetValue("a/1", "y").WithRetry(kvscheduler.RetryOptions{Period: time.Second}).Commit(ctx)
	if err == nil || rec.Executed[0].Err == nil {
		t.Fatalf("failed create: %v %+v", err, rec.Executed)
	}
	failedIn := rec.SeqNum
	eventually(t, "the retry timer", func() bool { return clk.HasWaiters() })
	clk.Step(time.Second)
	var retry *kvscheduler.TxnRecord
	eventually(t, "the retry", func() bool {
		for _, r := range s.TransactionHistory(time.Time{}, time.Time{}) {
			if r.Type == kvscheduler.RetryFailedOps {
				retry = r
			}
		}
		return retry != nil
	})
	if len(retry.Executed) != 2 {
		t.Fatalf("retry executed %+v", retry.Executed)
	}
	op, prop := retry.Executed[0], retry.Executed[1]
	if !op.Retry || op.Attempt != 1 || op.RetryFor != failedIn || op.PrevErr == nil || op.Err != nil {
		t.Fatalf("retried create %+v", op)
	}
	if prop.Key != "prop/a/1" || !prop.Property || !prop.Derived {
		t.Fatalf("property %+v", prop)
	}
}

// Rule 8: Commit stops between operations when its context ends; the
// values not applied stay as they were and are named.
func TestRuleCommitStopsWhenItsContextEnds(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d := sb.Descriptor("a", "a/")
	ctx, cancel := context.WithCancel(context.Background())
	create := d.Create
	d.Create = func(ctx context.Context, k string, v any) (any, error) {
		cancel() // the caller gives up while the first create runs
		return create(ctx, k, v)
	}
	register(t, s, d)
	_, err := s.StartNBTransaction().SetValue("a/1", "x").SetValue("a/2", "x").SetValue("a/3", "x").Commit(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	barrier(t, s)
	wantSB(t, sb, map[string]any{"a/1": "x"})
	recs := s.TransactionHistory(time.Time{}, time.Time{})
	if got := recs[0].NotApplied; !reflect.DeepEqual(got, []string{"a/2", "a/3"}) {
		t.Fatalf("not applied %v", got)
	}
	// The next transaction applies them.
	mustSet(t, s, "a/2", "x", "a/3", "x")
	wantSB(t, sb, map[string]any{"a/1": "x", "a/2": "x", "a/3": "x"})
}
