package kvscheduler_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestRegistrationErrors(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	ctx := context.Background()
	for name, d := range map[string]*kvscheduler.Descriptor{
		"nil":       nil,
		"no name":   {KeySelector: func(string) bool { return true }},
		"no select": {Name: "x"},
		"duplicate": sb.Descriptor("a", "zz/"),
		"overlap":   sb.Descriptor("a2", "a/sub/"),
	} {
		if err := s.RegisterDescriptor(ctx, d); !errors.Is(err, kvscheduler.ErrInvalidDescriptor) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestAmbiguousKey(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d1 := sb.Descriptor("one", "")
	d1.KeySelector = func(k string) bool { return strings.HasPrefix(k, "dup/") }
	d2 := sb.Descriptor("two", "")
	d2.KeySelector = func(k string) bool { return strings.HasSuffix(k, "/1") }
	register(t, s, d1, d2)
	wantInvalid(t, set(t, s, "dup/1", "x", "dup/2", "x"), "dup/1")
	st := wantState(t, s, "dup/1", kvscheduler.Invalid)
	if !errors.Is(st.Error, kvscheduler.ErrAmbiguousKey) {
		t.Fatalf("error %v", st.Error)
	}
	wantState(t, s, "dup/2", kvscheduler.Configured)
}

func TestCallbackPanicIsOperationError(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	d := sb.Descriptor("a", "a/")
	d.Create = func(context.Context, string, any) (any, error) { panic("oops") }
	register(t, s, d)
	err := set(t, s, "a/1", "x")
	if !errors.Is(err, kvscheduler.ErrPanic) {
		t.Fatalf("error %v", err)
	}
	wantState(t, s, "a/1", kvscheduler.Failed)
}

type iface struct {
	Name string
	MTU  int
}

func TestTypedDescriptor(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	var created []iface
	d := kvscheduler.TypedDescriptor[iface]{
		Name:        "iface",
		NBKeyPrefix: "if/",
		KeySelector: func(k string) bool { return strings.HasPrefix(k, "if/") },
		Validate: func(_ string, v iface) error {
			if v.MTU < 0 {
				return kvscheduler.NewInvalidValueError(errors.New("negative"), "MTU")
			}
			return nil
		},
		Create: func(_ context.Context, _ string, v iface) (any, error) {
			created = append(created, v)
			return nil, nil
		},
		Delete: func(context.Context, string, iface, any) error { return nil },
	}.Build()
	register(t, s, d)
	wantInvalid(t, set(t, s, "if/a", iface{Name: "a", MTU: 1500}, "if/b", iface{MTU: -1}, "if/c", "not an iface"), "if/b", "if/c")
	wantState(t, s, "if/a", kvscheduler.Configured)
	if st := wantState(t, s, "if/b", kvscheduler.Invalid); st.InvalidFields[0] != "MTU" {
		t.Fatalf("fields %v", st.InvalidFields)
	}
	wantState(t, s, "if/c", kvscheduler.Invalid)
	if len(created) != 1 {
		t.Fatalf("created %v", created)
	}
	// Equal values (reflect.DeepEqual by default) cause no update; a change
	// without Update re-creates.
	mustSet(t, s, "if/a", iface{Name: "a", MTU: 1500})
	mustSet(t, s, "if/a", iface{Name: "a", MTU: 9000})
	if len(created) != 2 {
		t.Fatalf("created %v", created)
	}
}

func TestHistoryBoundedAndLogged(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	var buf bytes.Buffer
	log := logrus.New()
	log.SetOutput(&buf)
	log.SetLevel(logrus.DebugLevel)
	reg := prometheus.NewRegistry()
	s := newSched(t, kvscheduler.Options{Name: "one", Clock: clk, Logger: log, Registerer: reg, TxnLogFormat: kvscheduler.TxnLogBoxes,
		HistoryMaxCount: 3, HistoryMaxAge: time.Minute, HistoryTrimPeriod: 10 * time.Second})
	// A second scheduler in the same process and on the same registry.
	s2 := newSched(t, kvscheduler.Options{Name: "two", Registerer: reg})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	register(t, s2, kvtest.New().Descriptor("a", "a/"))
	for i := 0; i < 5; i++ {
		mustSet(t, s, "a/1", i)
	}
	mustSet(t, s2, "a/1", 1)
	h := s.TransactionHistory(time.Time{}, time.Time{})
	if len(h) != 3 || h[0].SeqNum != 2 { // numbered from 0
		t.Fatalf("history %d records", len(h))
	}
	if r, ok := s.GetRecordedTransaction(4); !ok || len(r.Executed) != 1 || r.Executed[0].Operation != kvscheduler.OpUpdate {
		t.Fatalf("record %+v", r)
	}
	out := buf.String()
	for _, want := range []string{"Transaction #4", "executed operations", "UPDATE", "a/1"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log lacks %q:\n%s", want, out)
		}
	}
	mfs, err := reg.Gather()
	if err != nil || len(mfs) == 0 {
		t.Fatalf("metrics %v %v", len(mfs), err)
	}
	// Trimmed by age while idle.
	clk.Step(2 * time.Minute)
	eventually(t, "idle trimming", func() bool { return len(s.TransactionHistory(time.Time{}, time.Time{})) == 0 })
}

func TestClosedScheduler(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	w := s.WatchValueStatus(context.Background(), nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartNBTransaction().SetValue("a", 1).Commit(context.Background()); !errors.Is(err, kvscheduler.ErrClosed) {
		t.Fatalf("commit after close: %v", err)
	}
	if err := s.PushSBNotification("a", 1, nil); !errors.Is(err, kvscheduler.ErrClosed) {
		t.Fatalf("notify after close: %v", err)
	}
	for range w.C() {
	}
	if _, err := s.StartNBTransaction().SetValue("", 1).Commit(context.Background()); !errors.Is(err, kvscheduler.ErrEmptyKey) {
		t.Fatalf("empty key: %v", err)
	}
}
