package eventloop_test

import (
	"context"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	el "github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// patience bounds how long a test waits for something that must happen; it
// is a hang guard, never a performance assertion.
const patience = 10 * time.Second

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

type env struct {
	t         *testing.T
	loop      *eventloop.Loop
	clock     *clocktesting.FakeClock
	committer *el.Committer
	calls     *el.CallLog
	handlers  []*el.Handler
}

type envOption func(*eventloop.Options)

func withConfig(mod func(*eventloop.Config)) envOption {
	return func(o *eventloop.Options) {
		cfg := eventloop.DefaultConfig()
		if o.Config != nil {
			cfg = *o.Config
		}
		mod(&cfg)
		o.Config = &cfg
	}
}

// newEnv builds a loop with a fake clock, a recording committer and one
// recording handler per name (all sharing one call log). The loop is not
// started; it is closed when the test ends.
func newEnv(t *testing.T, names []string, opts ...envOption) *env {
	t.Helper()
	e := &env{t: t, clock: clocktesting.NewFakeClock(t0), committer: el.NewCommitter(), calls: &el.CallLog{}}
	logger := logrus.New()
	logger.SetOutput(io.Discard)
	logger.SetLevel(logrus.WarnLevel) // boxes (at Info) off; logging_test turns them on
	o := eventloop.Options{Committer: e.committer, Clock: e.clock, Logger: logrus.NewEntry(logger)}
	for _, n := range names {
		h := el.NewHandler(n, e.calls)
		e.handlers = append(e.handlers, h)
		o.Handlers = append(o.Handlers, h)
	}
	for _, opt := range opts {
		opt(&o)
	}
	l, err := eventloop.New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.loop = l
	t.Cleanup(func() { _ = l.Close() })
	return e
}

func (e *env) h(name string) *el.Handler {
	for _, h := range e.handlers {
		if h.Name == name {
			return h
		}
	}
	e.t.Fatalf("no handler %s", name)
	return nil
}

func (e *env) start() {
	e.t.Helper()
	if err := e.loop.Start(context.Background()); err != nil {
		e.t.Fatalf("Start: %v", err)
	}
}

func (e *env) push(ev eventloop.Event) {
	e.t.Helper()
	if err := e.loop.PushEvent(ev); err != nil {
		e.t.Fatalf("PushEvent(%s): %v", ev.GetName(), err)
	}
}

// run pushes ev and waits for its result.
func (e *env) run(ev *el.Event) error {
	e.t.Helper()
	e.push(ev)
	return wait(e.t, ev)
}

// startRunning starts the loop and processes a startup resync.
func (e *env) startRunning() {
	e.t.Helper()
	e.start()
	if err := e.run(el.NewResync("startup")); err != nil {
		e.t.Fatalf("startup resync: %v", err)
	}
}

func wait(t *testing.T, ev *el.Event) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	err := ev.Wait(ctx)
	if err == context.DeadlineExceeded {
		t.Fatalf("event %s was not done within %v", ev.Name, patience)
	}
	return err
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitProcessed waits until n events have been finalized.
func (e *env) waitProcessed(n uint64) {
	e.t.Helper()
	waitFor(e.t, "processed events", func() bool { return e.loop.Status().Processed >= n })
}

func callsOf(calls []el.Call, event string) []string {
	var out []string
	for _, c := range calls {
		if c.Event == event {
			out = append(out, c.Op+":"+c.Handler)
		}
	}
	return out
}

func names(recs []eventloop.EventRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Name
	}
	return out
}

func eq[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
	}
}

// loopGoroutines returns the stacks of goroutines running code of package
// eventloop (not of its tests).
func loopGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "lariat/pkg/eventloop.(*Loop)") && !strings.Contains(g, "_test.") {
			out = append(out, g)
		}
	}
	return out
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		// Every test closes its loops: none of their goroutines may remain.
		deadline := time.Now().Add(patience)
		for len(loopGoroutines()) > 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if left := loopGoroutines(); len(left) > 0 {
			println("leaked event loop goroutines:\n" + strings.Join(left, "\n\n"))
			code = 1
		}
	}
	os.Exit(code)
}
