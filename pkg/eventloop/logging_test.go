package eventloop_test

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	el "github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func withLogger(out *syncBuffer, level logrus.Level) envOption {
	return func(o *eventloop.Options) {
		logger := logrus.New()
		logger.SetOutput(out)
		logger.SetLevel(level)
		logger.SetFormatter(&logrus.TextFormatter{DisableQuote: true, DisableTimestamp: true})
		o.Logger = logrus.NewEntry(logger)
	}
}

// boxLines returns the lines of the event boxes in the log.
func boxLines(log string) []string {
	var out []string
	for _, ln := range strings.Split(log, "\n") {
		if strings.HasPrefix(ln, "*") || strings.HasPrefix(ln, ">>>") || strings.HasPrefix(ln, "<<<") {
			out = append(out, ln)
		}
	}
	return out
}

func TestEventBoxes(t *testing.T) {
	var out syncBuffer
	e := newEnv(t, []string{"podmanager", "ipnet", "service"}, withLogger(&out, logrus.InfoLevel))
	e.h("service").Handles = func(ev eventloop.Event) bool { return ev.GetName() != "no-service" }
	e.h("ipnet").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		switch ev.GetName() {
		case "Add Pod":
			if err := txn.PushFollowUp(el.NewUpdate("no-service")); err != nil {
				return "", err
			}
		case "broken":
			return "", errors.New("no route to VPP")
		}
		return "", nil
	}
	e.startRunning()
	pod := el.NewUpdate("Add Pod")
	pod.Desc = "Add Pod kube-system/coredns\n* Container: 740ee06ac2bc\n* Network namespace: /proc/25738/ns/net\n" +
		strings.Repeat("a long line that must wrap ", 10)
	if err := e.run(pod); err != nil {
		t.Fatal(err)
	}
	e.waitProcessed(3)
	broken := el.NewUpdate("broken")
	broken.Txn = eventloop.RevertOnFailure
	_ = e.run(broken)

	lines := boxLines(out.String())
	if len(lines) == 0 {
		t.Fatal("no boxes logged")
	}
	for _, ln := range lines {
		if len(ln) != 130 {
			t.Errorf("box line of %d columns: %q", len(ln), ln)
		}
	}
	log := strings.Join(lines, "\n")
	for _, want := range []string{
		"*   NEW EVENT: Add Pod kube-system/coredns",
		"#1 *",
		"*              * Container: 740ee06ac2bc",
		"*   EVENT HANDLERS: podmanager, ipnet, service",
		"*              a long line that must wrap a long",
		"*                long line that must wrap",
		"*   NEW EVENT (follow-up to #1): no-service",
		"*   EVENT HANDLERS: podmanager, ipnet ",
		"*   FINALIZED EVENT: Add Pod kube-system/coredns",
		"*   HANDLED BY: podmanager, ipnet, service",
		"took ",
		"*   ERRORS:",
		"*       * ipnet: no route to VPP",
		"*   REVERTED BY: podmanager",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	var seqLine string
	for _, ln := range lines {
		if strings.Contains(ln, "NEW EVENT: Add Pod") {
			seqLine = ln
		}
	}
	if !strings.HasSuffix(seqLine, " #1 *") {
		t.Errorf("sequence number not right-aligned: %q", seqLine)
	}
}

func TestEventBoxesOffAreNotBuilt(t *testing.T) {
	var out syncBuffer
	e := newEnv(t, []string{"a"}, withLogger(&out, logrus.InfoLevel), withConfig(func(c *eventloop.Config) {
		c.EventLogLevel = logrus.DebugLevel
	}))
	e.startRunning()
	var calls int32
	ev := &countingEvent{Event: el.Event{Name: "quiet"}, strings: &calls}
	e.push(ev)
	if err := wait(t, &ev.Event); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("String called %d times with boxes below the logger's level, want once (for the history record)", calls)
	}
	if lines := boxLines(out.String()); len(lines) != 0 {
		t.Fatalf("boxes logged at Debug with the logger at Info: %v", lines)
	}
}

// panickyDone panics in Done, after recording the call.
type panickyDone struct{ el.Event }

func (e *panickyDone) Done(err error) {
	e.Event.Done(err)
	panic("done bug")
}

// A panic in Event.Done is logged with its value and stack, and the loop goes
// on to the next event.
func TestPanickingDoneIsLogged(t *testing.T) {
	var out syncBuffer
	e := newEnv(t, []string{"a"}, withLogger(&out, logrus.InfoLevel))
	e.startRunning()
	ev := &panickyDone{Event: el.Event{Name: "panicky-done", Kind: eventloop.Update}}
	e.push(ev)
	if err := wait(t, &ev.Event); err != nil || ev.DoneCalls() != 1 {
		t.Fatalf("Done(%v) called %d times, want once with nil", err, ev.DoneCalls())
	}
	// The loop logs the panic before it takes the next event.
	if err := e.run(el.NewUpdate("next")); err != nil {
		t.Fatalf("loop broken by a panicking Done: %v", err)
	}
	log := out.String()
	if !strings.Contains(log, "Event.Done panicked") || !strings.Contains(log, "panic=done bug") ||
		!strings.Contains(log, "stack=goroutine") {
		t.Fatalf("no log line for the panic of Done, with its value and stack:\n%s", log)
	}
}
