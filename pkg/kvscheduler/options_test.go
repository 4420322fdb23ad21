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

// Negative durations have no meaning (a timer armed with one fires at
// once): New refuses them, naming the field.
func TestNewRefusesNegativeDurations(t *testing.T) {
	for name, o := range map[string]kvscheduler.Options{
		"HistoryMaxAge":     {HistoryMaxAge: -time.Second},
		"HistoryTrimPeriod": {HistoryTrimPeriod: -time.Second},
		"CloseTimeout":      {CloseTimeout: -time.Second},
	} {
		s, err := kvscheduler.New(o)
		if err == nil {
			_ = s.Close()
		}
		if !errors.Is(err, kvscheduler.ErrInvalidOptions) || !strings.Contains(err.Error(), name) {
			t.Errorf("New with a negative %s: %v, want an ErrInvalidOptions naming it", name, err)
		}
	}
}

// RetryOptions' documented meanings of values below zero: a negative
// MaxAttempts is unlimited, a negative Period is the default, one second.
func TestRetryNegativeMaxAttemptsIsUnlimited(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	s := newSched(t, kvscheduler.Options{Clock: clk, HistoryTrimPeriod: time.Hour})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	boom := errors.New("boom")
	const fails = 5
	sb.FailNext("create", "a/1", boom, boom, boom, boom, boom)
	_, err := s.StartNBTransaction().SetValue("a/1", "x").
		WithRetry(kvscheduler.RetryOptions{Period: -time.Minute, MaxAttempts: -1}).Commit(context.Background())
	if !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
	for i := 1; i < fails; i++ {
		clk.Step(time.Second)
		eventually(t, "retry", func() bool { return retries(s) == i })
	}
	clk.Step(time.Second)
	eventually(t, "the last retry", func() bool { return s.GetValueStatus("a/1").State == kvscheduler.Configured })
	if n := creates(sb); n != fails+1 {
		t.Fatalf("%d creates, want %d", n, fails+1)
	}
}
