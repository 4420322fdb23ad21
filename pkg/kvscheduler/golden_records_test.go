package kvscheduler_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	clocktesting "k8s.io/utils/clock/testing"
)

// The golden test of serial records (issue 29, parallel apply): the
// scheduler's records of a fixed set of random-graph scenarios, written
// out field by field, must stay byte for byte what testdata holds. It
// guards the serial walk while the engine is reshaped for parallel apply:
// a change of the walk's order, of an operation's fields, of retries or
// reverts shows as the first differing line. A change meant to alter
// the order (a fix of the walk) regenerates the file with
//
//	go test -count=1 -run TestSerialRecordsUnchanged ./pkg/kvscheduler/ -update
//
// and its diff is part of the review.

var updateGolden = flag.Bool("update", false, "rewrite the golden records of TestSerialRecordsUnchanged")

// goldenFile holds the expected records, goldenRendered the same records
// as the scheduler prints them (TxnRecord.Line, and the boxes of
// TxnRecord.String for the seeds up to goldenBoxSeeds: boxes are large),
// so that fields a parallel walk adds cannot change what a serial one
// prints.
const (
	goldenFile     = "testdata/golden_records.txt"
	goldenRendered = "testdata/golden_rendered.txt"
	goldenBoxSeeds = 3
)

// goldenSeeds are TestRandomGraphs' seeds the golden set runs, each
// twice: committed with retries, and with revert and retries. They were
// picked from the first seeds so that together they hold failures,
// retries, reverts, re-creates, resyncs of every kind and notifications
// (TestSerialRecordsUnchanged checks that they still do).
var goldenSeeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}

// TestSerialRecordsUnchanged runs the golden scenarios and compares their
// records with goldenFile.
func TestSerialRecordsUnchanged(t *testing.T) {
	var out, rendered strings.Builder
	seen := map[string]int{}
	for _, seed := range goldenSeeds {
		for _, revert := range []bool{false, true} {
			sc := genScenario(rand.New(rand.NewPCG(seed, 13)))
			extendScenario(rand.New(rand.NewPCG(seed, 25)), &sc)
			extendNotifications(rand.New(rand.NewPCG(seed, 26)), &sc)
			extendOrdering(rand.New(rand.NewPCG(seed, 27)), &sc)
			fmt.Fprintf(&out, "=== seed %d revert %v\n", seed, revert)
			fmt.Fprintf(&rendered, "=== seed %d revert %v\n", seed, revert)
			if err := runGolden(&out, &rendered, seed <= goldenBoxSeeds, sc, revert, seen); err != nil {
				t.Fatalf("seed %d revert %v: %v", seed, revert, err)
			}
		}
	}
	// The set must still exercise what it guards: a scenario change that
	// lost all failures (say) would pass without guarding anything.
	for _, what := range []string{"failed op", "retry txn", "revert op", "recreate op", "derived op", "full resync", "downstream resync", "notification"} {
		if seen[what] == 0 {
			t.Errorf("the golden scenarios have no %s any more (seen: %v)", what, seen)
		}
	}
	// The records first: their first difference says more than the
	// printed forms'.
	for _, f := range []struct {
		file, got string
	}{{goldenFile, out.String()}, {goldenRendered, rendered.String()}} {
		if *updateGolden {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f.file, []byte(f.got), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s: %d lines (%v)", f.file, strings.Count(f.got, "\n"), seen)
			continue
		}
		want, err := os.ReadFile(f.file)
		if err != nil {
			t.Fatalf("%v (run with -update to write it)", err)
		}
		if msg := firstDifference(string(want), f.got); msg != "" {
			t.Fatalf("the serial records differ from %s (rerun with -update if the change is meant):\n%s", f.file, msg)
		}
	}
}

// firstDifference describes the first line where got differs from want,
// with the scenario and transaction it belongs to; "" if they are equal.
func firstDifference(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	line := func(ls []string) string {
		if i < len(ls) {
			return ls[i]
		}
		return "(end of file)"
	}
	var scen, txn string
	for _, l := range w[:i] {
		switch {
		case strings.HasPrefix(l, "=== "):
			scen, txn = l, ""
		case strings.HasPrefix(l, "txn "), strings.HasPrefix(l, "line txn "):
			txn = l
		}
	}
	return fmt.Sprintf("line %d, in %q, %q:\n  want: %s\n  got:  %s", i+1, scen, txn, line(w), line(g))
}

// runGolden runs sc as TestRandomGraphs does (without its checks: they
// judge the walk, this test only pins it), every commit with revert if
// revert is set and with the retries armed after every second
// transaction fired, and writes the records and the end state to out,
// and the records as the scheduler prints them (with boxes, their boxes
// too) to rendered.
func runGolden(out, rendered *strings.Builder, boxes bool, sc scenario, revert bool, seen map[string]int) error {
	clk := &retryClock{FakeClock: clocktesting.NewFakeClock(time.Unix(1000, 0))}
	s, err := kvscheduler.New(kvscheduler.Options{Clock: clk, HistoryTrimPeriod: trimPeriod, HistoryMaxCount: 100000, HistoryMaxAge: trimPeriod})
	if err != nil {
		return err
	}
	defer s.Close()
	sb := kvtest.New()
	h := &harness{sb: sb, desired: map[string]rval{}, failed: map[string]string{}, lost: map[string]any{}, owned: map[string]any{}}
	r := &runner{s: s, sb: sb, clk: clk, h: h}
	for _, d := range h.descriptors(sc) {
		if err := s.RegisterDescriptor(context.Background(), d); err != nil {
			return err
		}
	}
	ctx := context.Background()
	commit := func(txn *kvscheduler.Txn) error {
		txn.WithRetry(kvscheduler.RetryOptions{Period: time.Second, ExpBackoff: true})
		if revert {
			txn.WithRevert()
		}
		_, err := txn.Commit(ctx)
		if te := (*kvscheduler.TransactionError)(nil); err != nil && !errors.As(err, &te) {
			return err
		}
		return nil
	}
	for i, tx := range sc.Txns {
		if err := goldenStep(r, sc, i, tx, commit); err != nil {
			return err
		}
	}
	if len(h.lost) > 0 {
		if err := commit(s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync)); err != nil {
			return err
		}
	}
	for round := 0; clk.pending() > 0; round++ {
		if round == 100 {
			return errors.New("retries still armed after 100 rounds")
		}
		clk.Step(2 * time.Hour)
		if err := commit(s.StartNBTransaction()); err != nil {
			return err
		}
	}
	for _, rec := range s.TransactionHistory(time.Time{}, time.Time{}) {
		writeGoldenRecord(out, rec, seen)
		fmt.Fprintf(rendered, "line %s\n", rec.Line())
		if boxes {
			rendered.WriteString(rec.String())
		}
	}
	writeGoldenEnd(out, s, sb)
	return nil
}

// goldenStep runs transaction i of sc as runner.step does, through
// commit, then lets the armed retries run after every second one.
func goldenStep(r *runner, sc scenario, i int, tx rtxn, commit func(*kvscheduler.Txn) error) error {
	s, sb, h, clk := r.s, r.sb, r.h, r.clk
	h.mu.Lock()
	h.step = fmt.Sprintf("txn %d", i)
	for _, f := range tx.Fail {
		sb.FailNext(f.Op, f.Key, errInjected)
	}
	for _, k := range tx.Lose {
		h.lose(k)
	}
	for _, n := range tx.Notify {
		if f := h.notify(s, n); f != nil {
			h.mu.Unlock()
			return errors.New(f.String())
		}
		h.mu.Unlock()
		if err := commit(s.StartNBTransaction()); err != nil {
			return err
		}
		h.mu.Lock()
	}
	txn := r.txnOf(tx)
	h.mu.Unlock()
	if err := commit(txn); err != nil {
		return err
	}
	h.mu.Lock()
	h.found(sc, tx)
	h.mu.Unlock()
	if i%2 == 1 && clk.pending() > 0 {
		// Unlike TestRandomGraphs, which fires retries only at the
		// end, every second transaction lets the armed retries run,
		// so that retry transactions meet the later changes.
		clk.Step(2 * time.Hour)
		return commit(s.StartNBTransaction())
	}
	return nil
}

// writeGoldenRecord writes every field of rec that the serial walk
// decides, one operation a line. Times are left out (a parallel walk
// adds its own), and so is everything not set by the walk.
func writeGoldenRecord(out *strings.Builder, rec *kvscheduler.TxnRecord, seen map[string]int) {
	fmt.Fprintf(out, "txn %d %s resync=%s keys=%v revert=%v retryOf=%v obtained=%d desc=%q\n",
		rec.SeqNum, rec.Type, rec.Resync, rec.ResyncKeys, rec.Revert, rec.RetryOf, rec.Obtained, rec.Description)
	switch {
	case rec.Type == kvscheduler.RetryFailedOps:
		seen["retry txn"]++
	case rec.Type == kvscheduler.SBNotification:
		seen["notification"]++
	case rec.Resync == kvscheduler.FullResync:
		seen["full resync"]++
	case rec.Resync == kvscheduler.DownstreamResync:
		seen["downstream resync"]++
	}
	for _, v := range rec.Values {
		fmt.Fprintf(out, "  value %s = %v\n", v.Key, v.Value)
	}
	for _, op := range rec.Executed {
		var flags []string
		for _, f := range []struct {
			on   bool
			name string
		}{{op.Recreate, "recreate"}, {op.Revert, "revert"}, {op.Derived, "derived"}, {op.Property, "property"}, {op.NOOP, "noop"}, {op.Retry, "retry"}} {
			if f.on {
				flags = append(flags, f.name)
				seen[f.name+" op"]++
			}
		}
		if op.Err != nil {
			seen["failed op"]++
		}
		fmt.Fprintf(out, "  op %s %s %s->%s [%s] attempt=%d for=%d prev=%v new=%v err=%v preverr=%v\n",
			op.Operation, op.Key, op.PrevState, op.NewState, strings.Join(flags, ","), op.Attempt, op.RetryFor,
			op.PrevValue, op.NewValue, op.Err, op.PrevErr)
	}
	for _, e := range rec.Errors {
		fmt.Fprintf(out, "  error %v\n", e)
	}
	if len(rec.NotApplied) > 0 {
		seen["not applied"]++
		fmt.Fprintf(out, "  not applied %v\n", rec.NotApplied)
	}
}

// writeGoldenEnd writes what the southbound holds and every value's
// status at the end of a scenario.
func writeGoldenEnd(out *strings.Builder, s *kvscheduler.Scheduler, sb *kvtest.Southbound) {
	vals := sb.Values()
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range vals {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(out, "sb %s = %v\n", k, vals[k])
	}
	sts := s.ValueStatuses(nil)
	slices.SortFunc(sts, func(a, b kvscheduler.ValueStatus) int { return strings.Compare(a.Key, b.Key) })
	for _, st := range sts {
		fmt.Fprintf(out, "status %s %s last=%s err=%v unmet=%v\n", st.Key, st.State, st.LastOp, st.Error, st.UnmetDependencies)
	}
}
