package eventloop_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	el "github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// TestEventLogLine: with EventLogFormat line, each event is one log entry
// of one line (no boxes), with its number, description, handlers and
// errors.
func TestEventLogLine(t *testing.T) {
	var out syncBuffer
	e := newEnv(t, []string{"a", "b"}, withLogger(&out, logrus.InfoLevel), withConfig(func(c *eventloop.Config) {
		c.EventLogFormat = eventloop.EventLogLine
	}))
	e.h("b").OnUpdate = func(ev eventloop.Event, _ eventloop.UpdateOperations) (string, error) {
		if ev.GetName() == "broken" {
			return "", errors.New("no route\nsecond line")
		}
		return "", nil
	}
	e.startRunning()
	ok := el.NewUpdate("fine")
	ok.Desc = "fine event\nwith a second line"
	if err := e.run(ok); err != nil {
		t.Fatal(err)
	}
	_ = e.run(el.NewUpdate("broken"))

	if lines := boxLines(out.String()); len(lines) != 0 {
		t.Fatalf("boxes logged with the line format: %v", lines)
	}
	var events []string
	for _, ln := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.Contains(ln, "msg=event #") {
			events = append(events, ln)
		}
	}
	if len(events) != 3 { // the startup resync, fine, broken
		t.Fatalf("%d event lines, want 3:\n%s", len(events), out.String())
	}
	for i, want := range [][]string{
		{"event #0"},
		{"event #1: fine event;", "handled by a, b in "},
		{"event #2: broken;", "errors: b: no route"},
	} {
		for _, w := range want {
			if !strings.Contains(events[i], w) {
				t.Errorf("line %d lacks %q: %s", i, w, events[i])
			}
		}
	}
}

func TestEventLogFormatIsChecked(t *testing.T) {
	cfg := eventloop.DefaultConfig()
	cfg.EventLogFormat = "fancy"
	if _, err := eventloop.New(eventloop.Options{Config: &cfg}); err == nil {
		t.Fatal("an unknown eventLogFormat was accepted")
	}
}
