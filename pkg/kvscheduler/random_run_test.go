package kvscheduler_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// How TestRandomGraphs runs a scenario: each transaction after its
// injected failures, losses and notifications, then a repair of what is
// still lost, then every retry until none is armed (on a fake clock).

// runScenario runs sc and returns the first violation.
func runScenario(sc scenario) (res *propFailure) {
	clk := &retryClock{FakeClock: clocktesting.NewFakeClock(time.Unix(1000, 0))}
	s, err := kvscheduler.New(kvscheduler.Options{Clock: clk, HistoryTrimPeriod: trimPeriod, HistoryMaxCount: 64, HistoryMaxAge: trimPeriod})
	if err != nil {
		return &propFailure{kind: "setup", msg: err.Error()}
	}
	defer s.Close()
	if *kvHistory {
		// The scheduler's records explain a failure of a reproducer.
		defer func() {
			if res != nil {
				for _, r := range s.TransactionHistory(time.Time{}, time.Time{}) {
					res.msg += "\n" + r.String()
				}
			}
		}()
	}
	sb := kvtest.New()
	r := &runner{s: s, sb: sb, clk: clk,
		h: &harness{sb: sb, desired: map[string]rval{}, failed: map[string]string{}, lost: map[string]any{}, owned: map[string]any{}}}
	kvscheduler.AfterJob(s, r.checkModel)
	if *kvLeave {
		kvscheduler.CheckLeaveSets(s, r.checkLeave)
	}
	for _, desc := range r.h.descriptors(sc) {
		if err := s.RegisterDescriptor(context.Background(), desc); err != nil {
			return &propFailure{kind: "setup", msg: err.Error()}
		}
	}
	for i, tx := range sc.Txns {
		if f := r.step(sc, i, tx); f != nil {
			return f
		}
	}
	if f := r.settle(); f != nil {
		return f
	}
	if f := r.modelFailure(); f != nil {
		return f
	}
	return r.checkSettled()
}

// checkModel runs on the scheduler's goroutine after each job and retry:
// it keeps the first disagreement of the scheduler's fields with the
// model they are being replaced by (see kvscheduler.CheckModel).
func (r *runner) checkModel() {
	err := errors.Join(kvscheduler.CheckModel(r.s), kvscheduler.CheckHeldSet(r.s), kvscheduler.CheckHeldUnknown(r.s), kvscheduler.CheckPublished(r.s))
	if err == nil {
		return
	}
	r.modelMu.Lock()
	defer r.modelMu.Unlock()
	if r.modelErr == nil {
		r.modelErr = fmt.Errorf("in %s: %w", r.atStep, err)
	}
}

// modelFailure returns the first disagreement checkModel found, if any.
func (r *runner) modelFailure() *propFailure {
	r.modelMu.Lock()
	defer r.modelMu.Unlock()
	if r.modelErr == nil {
		return nil
	}
	return &propFailure{kind: "model", msg: r.modelErr.Error(), step: r.atStep}
}

// runner runs a scenario: its scheduler, southbound, fake clock and
// model.
type runner struct {
	s   *kvscheduler.Scheduler
	sb  *kvtest.Southbound
	clk *retryClock
	h   *harness
	// modelMu guards modelErr, the first disagreement with the model
	// found by checkModel, and atStep, the step the harness is at (the
	// worker reads it while the test goroutine may hold h.mu, so it has
	// its own copy).
	modelMu  sync.Mutex
	modelErr error
	atStep   string
}

// commit commits txn (with unlimited retries) and checks rules 3 and 4.
func (r *runner) commit(txn *kvscheduler.Txn) *propFailure {
	s, sb, h := r.s, r.sb, r.h
	sb.ResetOps()
	h.mu.Lock()
	r.modelMu.Lock()
	r.atStep = h.step
	r.modelMu.Unlock()
	h.orderedAfter = map[string]string{} // "deletes before" holds within one transaction
	h.mu.Unlock()
	inBefore := sb.Values() // for rule 4 (see spuriousFailure)
	failedBefore := map[string]bool{}
	for _, st := range s.ValueStatuses(nil) {
		failedBefore[st.Key] = st.State == kvscheduler.Failed || st.State == kvscheduler.Retrying
	}
	retry := kvscheduler.RetryOptions{Period: time.Second, ExpBackoff: true} // unlimited attempts
	_, err := txn.WithRetry(retry).Commit(context.Background())
	defer func() {
		if h.violation != nil && h.violation.ops == "" {
			h.violation.ops = strings.Join(sb.OpStrings(), ", ")
		}
	}()
	if f := r.modelFailure(); f != nil {
		return f
	}
	var te *kvscheduler.TransactionError
	if err != nil && !errors.As(err, &te) {
		return &propFailure{kind: "commit", msg: err.Error(), step: h.step}
	}
	if f := spuriousFailure(te, inBefore, sb.Values(), failedBefore); f != nil {
		f.step = h.step
		return f
	}
	// An update the scheduler refused itself (a property the old value
	// derives is still needed) leaves the value in the southbound as
	// it was, as one the southbound failed does (seeds 28574, 37335).
	for k := range sb.Values() {
		if st := s.GetValueStatus(k); (st.State == kvscheduler.Failed || st.State == kvscheduler.Retrying) &&
			st.LastOp == kvscheduler.OpUpdate && st.Error != nil && strings.Contains(st.Error.Error(), "is still needed") {
			h.noted(k, "update")
		}
	}
	h.checkAfterTxn()
	return h.violation
}

// step runs transaction i of sc: its injected failures, losses and
// notifications first, then the transaction itself.
func (r *runner) step(sc scenario, i int, tx rtxn) *propFailure {
	s, h := r.s, r.h
	h.mu.Lock()
	h.step = fmt.Sprintf("txn %d", i)
	for _, f := range tx.Fail {
		r.sb.FailNext(f.Op, f.Key, errInjected)
	}
	for _, k := range tx.Lose {
		h.lose(k)
	}
	// Each notification is processed (an empty transaction waits for
	// it) before the next one is made from the southbound's content,
	// and before the model takes the transaction's changes.
	for _, n := range tx.Notify {
		if f := h.notify(s, n); f != nil {
			h.mu.Unlock()
			return f
		}
		h.mu.Unlock()
		if f := r.commit(s.StartNBTransaction()); f != nil {
			return f
		}
		h.mu.Lock()
	}
	txn := r.txnOf(tx)
	h.mu.Unlock()
	if f := r.commit(txn); f != nil {
		return f
	}
	h.mu.Lock()
	h.found(sc, tx)
	h.mu.Unlock()
	return nil
}

// txnOf makes the transaction of tx and records its values as desired in
// the model (under h.mu).
func (r *runner) txnOf(tx rtxn) *kvscheduler.Txn {
	h := r.h
	txn := r.s.StartNBTransaction().WithResync(tx.Resync)
	if len(tx.Keys) > 0 {
		txn.WithResyncKeys(tx.Keys...)
	}
	if tx.Resync != kvscheduler.DownstreamResync {
		for _, st := range tx.Set {
			if st.Val == nil {
				delete(h.desired, st.Key)
			} else {
				h.desired[st.Key] = *st.Val
			}
			if tx.Resync == kvscheduler.NoResync {
				if st.Val == nil {
					txn.SetValue(st.Key, nil)
				} else {
					txn.SetValue(st.Key, *st.Val)
				}
			}
		}
	}
	if tx.Resync == kvscheduler.FullResync || tx.Resync == kvscheduler.UpstreamResync {
		for _, k := range sortedKeys(h.desired) {
			txn.SetValue(k, h.desired[k])
		}
	}
	return txn
}

// settle repairs what was lost and not read back since, then fires every
// armed retry timer until none is armed.
func (r *runner) settle() *propFailure {
	h := r.h
	if len(h.lost) > 0 {
		// What was lost and not read back since is repaired by a
		// downstream resync before the retries settle.
		h.step = "repair"
		if f := r.commit(r.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync)); f != nil {
			return f
		}
		clear(h.lost)
	}
	// The scheduler runs the retries whose timers fired before its next
	// queued job, so the empty transaction after the step waits for them.
	for round := 0; r.clk.pending() > 0; round++ {
		h.mu.Lock()
		h.step = fmt.Sprintf("retry round %d", round)
		h.mu.Unlock()
		if round == 100 {
			return &propFailure{kind: "settle", msg: "retries still armed after 100 rounds", step: h.step}
		}
		r.clk.Step(2 * time.Hour)
		if f := r.commit(r.s.StartNBTransaction()); f != nil {
			return f
		}
	}
	return nil
}

// retryClock counts the armed retry timers (fired or stopped ones are not):
// the history trim timer is longer than any retry delay.
type retryClock struct {
	*clocktesting.FakeClock
	mu    sync.Mutex
	armed int
}

const trimPeriod = 100000 * time.Hour

// retryTimer is a retry timer of a retryClock.
type retryTimer struct {
	clock.Timer
	c     *retryClock
	armed bool // under c.mu
}

func (c *retryClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	if d >= trimPeriod {
		return c.FakeClock.AfterFunc(d, f)
	}
	t := &retryTimer{c: c, armed: true}
	c.mu.Lock()
	c.armed++
	c.mu.Unlock()
	t.Timer = c.FakeClock.AfterFunc(d, func() {
		t.disarm()
		f()
	})
	return t
}

func (t *retryTimer) disarm() {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.armed {
		t.armed = false
		t.c.armed--
	}
}

func (t *retryTimer) Stop() bool {
	t.disarm()
	return t.Timer.Stop()
}

func (c *retryClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.armed
}

var errInjected = errors.New("injected failure")
