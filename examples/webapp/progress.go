package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/examples/webapp/operator"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// printer writes the plain-words account of what happens; several
// goroutines print through it, one whole message at a time.
type printer struct {
	mu  sync.Mutex
	out io.Writer

	// later holds status messages until the events before them are
	// printed: a status changes as soon as a transaction commits, while
	// its event is read from the history a moment later.
	later []string
}

func newPrinter(out io.Writer) *printer { return &printer{out: out} }

// say prints one message with a time stamp.
func (p *printer) say(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.print(fmt.Sprintf(format, args...))
}

func (p *printer) print(msg string) {
	fmt.Fprintf(p.out, "%s  %s\n", time.Now().Format("15:04:05.000"), strings.ReplaceAll(msg, "\n", "\n              "))
}

// sayLater queues a message for the next flush (see later).
func (p *printer) sayLater(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.later = append(p.later, msg)
}

// flush prints the queued messages.
func (p *printer) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, msg := range p.later {
		p.print(msg)
	}
	p.later = nil
}

// followEvents prints every event the loop processed that changed
// something: what each handler did and what the scheduler executed. It
// reads the event history, the same record /controller/event-history
// serves, so its account and the endpoint agree.
func (p *printer) followEvents(ctx context.Context, loop *eventloop.Loop, sched *kvscheduler.Scheduler) {
	var next uint64
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, rec := range loop.History().Range(next, math.MaxUint64) {
			next = rec.SeqNum + 1
			if msg := describeEvent(rec, sched); msg != "" {
				p.say("%s", msg)
			}
		}
		p.flush()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// describeEvent puts an event record into words; quiet events (nothing
// changed) give "". The event history keeps only a summary of each
// transaction; the details (which values wait, for what) come from the
// scheduler's own record, read by the summary's sequence number while the
// scheduler keeps it.
func describeEvent(rec eventloop.EventRecord, sched *kvscheduler.Scheduler) string {
	var b strings.Builder
	for _, h := range rec.Handlers {
		switch {
		case h.Error != nil:
			fmt.Fprintf(&b, "\n  %s failed: %v", h.Handler, h.Error)
		case h.Change != "":
			fmt.Fprintf(&b, "\n  %s: %s", h.Handler, h.Change)
		}
	}
	if txn := schedulerRecord(rec, sched); txn != nil {
		scheduler := fmt.Sprintf("transaction %d", txn.SeqNum)
		for _, op := range txn.Executed {
			if op.NOOP {
				continue // a value left waiting: said below
			}
			describeOp(&b, scheduler, op.Operation.String(), op.Key, op.NewState.String(), op.Err)
		}
		for _, kv := range txn.Values {
			if st := sched.GetValueStatus(kv.Key); st.State == kvscheduler.Pending && kv.Value != nil {
				fmt.Fprintf(&b, "\n  %s: %s is PENDING, waiting for %s", scheduler, kv.Key, strings.Join(st.UnmetDependencies, ", "))
			}
		}
	} else if rec.Txn != nil && len(rec.Txn.Ops) > 0 {
		// The scheduler no longer keeps the record: what the summary says.
		scheduler := fmt.Sprintf("transaction %d", rec.Txn.SeqNum)
		for _, op := range rec.Txn.Ops {
			var err error
			if op.Error != "" {
				err = errors.New(op.Error)
			}
			describeOp(&b, scheduler, op.Operation, op.Key, op.State, err)
		}
		if rec.Txn.OmittedOps > 0 {
			fmt.Fprintf(&b, "\n  %s: and %d more operations", scheduler, rec.Txn.OmittedOps)
		}
	} else if rec.TxnError != nil {
		fmt.Fprintf(&b, "\n  transaction failed: %v", rec.TxnError)
	}
	if b.Len() == 0 {
		return ""
	}
	head := fmt.Sprintf("event %d: %s", rec.SeqNum, firstLine(rec.Description))
	if rec.IsFollowUp {
		head += fmt.Sprintf(" (follow-up of event %d)", rec.FollowUpTo)
	}
	return head + b.String()
}

// schedulerRecord returns the scheduler's record of the event's
// transaction, or nil when the event committed nothing or the scheduler's
// history no longer has it.
func schedulerRecord(rec eventloop.EventRecord, sched *kvscheduler.Scheduler) *kvscheduler.TxnRecord {
	if rec.Txn == nil || rec.Txn.SeqNum == 0 && rec.Txn.Ref == "" {
		return nil
	}
	txn, _ := sched.GetRecordedTransaction(rec.Txn.SeqNum)
	return txn
}

// describeOp puts one executed operation into words.
func describeOp(b *strings.Builder, scheduler, op, key, state string, err error) {
	op = strings.ToLower(op)
	switch {
	case err != nil:
		fmt.Fprintf(b, "\n  %s: %s %s FAILED: %v", scheduler, op, key, err)
	case state == kvscheduler.Pending.String():
		fmt.Fprintf(b, "\n  %s: %sd %s, now PENDING again", scheduler, op, key)
	default:
		fmt.Fprintf(b, "\n  %s: %sd %s", scheduler, op, key)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// followReadiness prints each WebApp's Ready condition when it changes.
func (p *printer) followReadiness(ctx context.Context, op *operator.Operator) {
	var mu sync.Mutex
	last := map[string]string{}
	op.WebApps().OnChange(ctx, "progress", func(key string, app *demov1.WebApp) (*demov1.WebApp, error) {
		mu.Lock()
		defer mu.Unlock()
		if app == nil {
			if _, ok := last[key]; ok {
				delete(last, key)
				p.sayLater("WebApp " + key + " deleted.")
			}
			return nil, nil
		}
		c := operator.Ready.Get(app.Status.Conditions)
		if c == nil {
			return nil, nil
		}
		msg := fmt.Sprintf("WebApp %s: Ready=%s (%s) %s", key, c.Status, c.Reason, c.Message)
		if last[key] != msg {
			last[key] = msg
			p.sayLater(msg)
		}
		return nil, nil
	})
}
