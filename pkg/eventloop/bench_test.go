package eventloop_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	el "github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

type nopHandler struct{ name string }

func (h nopHandler) String() string                    { return h.name }
func (h nopHandler) HandlesEvent(eventloop.Event) bool { return true }
func (h nopHandler) Update(eventloop.Event, eventloop.UpdateOperations) (string, error) {
	return "", nil
}
func (h nopHandler) Resync(eventloop.Event, any, int, eventloop.ResyncOperations) error { return nil }
func (h nopHandler) Revert(eventloop.Event) error                                       { return nil }

// benchEvent is a non-blocking update nobody waits for.
type benchEvent struct{}

func (benchEvent) GetName() string                                  { return "bench" }
func (benchEvent) String() string                                   { return "bench event" }
func (benchEvent) Method() eventloop.EventMethodType                { return eventloop.Update }
func (benchEvent) IsBlocking() bool                                 { return false }
func (benchEvent) Done(error)                                       {}
func (benchEvent) TransactionType() eventloop.UpdateTransactionType { return eventloop.BestEffort }
func (benchEvent) Direction() eventloop.UpdateDirectionType         { return eventloop.Forward }

// BenchmarkLoop measures the throughput of the loop: one producer pushes
// b.N non-blocking events through 8 no-op handlers, with history recorded and
// the event boxes at Debug while the logger is at Info.
func BenchmarkLoop(b *testing.B) { benchmarkLoop(b, nil) }

// BenchmarkLoopWithMetrics is BenchmarkLoop with Prometheus metrics on.
func BenchmarkLoopWithMetrics(b *testing.B) { benchmarkLoop(b, prometheus.NewRegistry()) }

func benchmarkLoop(b *testing.B, reg prometheus.Registerer) {
	logger := logrus.New()
	logger.SetOutput(io.Discard)
	logger.SetLevel(logrus.InfoLevel)
	cfg := eventloop.DefaultConfig()
	cfg.EventLogLevel = logrus.DebugLevel
	var handlers []eventloop.EventHandler
	for i := 0; i < 8; i++ {
		handlers = append(handlers, nopHandler{name: "h" + string(rune('0'+i))})
	}
	l, err := eventloop.New(eventloop.Options{Config: &cfg, Handlers: handlers, Logger: logrus.NewEntry(logger), Registerer: reg})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	if err := l.Start(ctx); err != nil {
		b.Fatal(err)
	}
	startup := el.NewResync("startup")
	if err := l.PushEvent(startup); err != nil {
		b.Fatal(err)
	}
	if err := startup.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	ev := benchEvent{}
	last := el.NewUpdate("last")

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := l.PushEventContext(ctx, ev); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.PushEventContext(ctx, last); err != nil {
		b.Fatal(err)
	}
	if err := last.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
}
