package eventloop_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	el "github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// TestStopAfterStartsContextEnded is the documented pattern
// `loop.Start(ctx); defer loop.Stop(ctx)` when ctx ends: the loop closed
// itself, as it was told to, so Stop has nothing left to do and reports no
// error, however the cancellation and Stop interleave.
func TestStopAfterStartsContextEnded(t *testing.T) {
	for i := range 50 {
		e := newEnv(t, []string{"h"})
		ctx, cancel := context.WithCancel(context.Background())
		if err := e.loop.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := e.run(el.NewResync("startup")); err != nil {
			t.Fatal(err)
		}
		cancel()
		if i%2 == 0 {
			<-e.loop.Exited()
		}
		if err := e.loop.Stop(ctx); err != nil {
			t.Fatalf("run %d: Stop after Start's context ended: %v", i, err)
		}
		if err := e.loop.Health(); !errors.Is(err, eventloop.ErrClosed) {
			t.Fatalf("run %d: health after Stop: %v", i, err)
		}
	}
}

// TestClosingDuringACommitIsQuiet closes the loop while an event's commit
// is in progress: the commit fails because the loop's context ended, which
// is the closing, not a failure to heal: nothing is logged at warning
// level or above (before the fix: "after-error healing resync scheduled").
func TestClosingDuringACommitIsQuiet(t *testing.T) {
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.InfoLevel)
	entered := make(chan struct{}, 1)
	committer := eventloop.CommitterFunc(func(ctx context.Context, req eventloop.TxnRequest) (eventloop.TxnSummary, error) {
		if req.Method != eventloop.Update {
			return eventloop.TxnSummary{}, nil
		}
		entered <- struct{}{}
		<-ctx.Done()
		return eventloop.TxnSummary{}, ctx.Err()
	})
	e := newEnv(t, []string{"h"}, func(o *eventloop.Options) {
		o.Committer = committer
		o.Logger = logrus.NewEntry(log)
	})
	e.h("h").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		txn.Put("k", "v")
		return "put k", nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := e.loop.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.run(el.NewResync("startup")); err != nil {
		t.Fatal(err)
	}
	ev := el.NewUpdate("change")
	e.push(ev)
	<-entered
	cancel()
	<-e.loop.Exited()
	if err := wait(t, ev); !errors.Is(err, context.Canceled) {
		t.Fatalf("event cut short by the closing: %v, want context.Canceled", err)
	}
	for _, entry := range hook.AllEntries() {
		if entry.Level <= logrus.WarnLevel {
			t.Fatalf("closing logged at %s: %s %v", entry.Level, entry.Message, entry.Data)
		}
	}
}
