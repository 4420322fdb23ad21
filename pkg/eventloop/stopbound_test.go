package eventloop_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	el "github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// TestStopIsBoundedByItsContextWhenAHandlerDoesNotReturn: Stop with a live
// context that ends while a handler still runs returns then, with a
// *StillRunningError naming the event and the handler, counted in
// lariat_eventloop_outlived_stop_total; the loop goroutine exits once the
// handler returns. Before, Stop waited for the loop goroutine with no
// bound once its Shutdown event's wait had ended.
func TestStopIsBoundedByItsContextWhenAHandlerDoesNotReturn(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newEnv(t, []string{"slow"}, func(o *eventloop.Options) { o.Registerer, o.Name = reg, "bound" })
	entered, release := make(chan struct{}), make(chan struct{})
	e.h("slow").OnUpdate = func(ev eventloop.Event, _ eventloop.UpdateOperations) (string, error) {
		if ev.GetName() == "stuck" {
			close(entered)
			<-release
		}
		return "", nil
	}
	e.startRunning()
	e.push(el.NewUpdate("stuck"))
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := e.loop.Stop(ctx)
	close(release)
	var still *eventloop.StillRunningError
	if !errors.As(err, &still) || !errors.Is(err, eventloop.ErrStillRunning) {
		t.Fatalf("Stop with a handler that does not return: %v, want a *StillRunningError", err)
	}
	if still.Loop != "bound" || still.Event != "stuck" || still.Handler != "slow" {
		t.Fatalf("Stop's error names %+v, want loop bound, event stuck, handler slow", *still)
	}
	labels := map[string]string{"loop": "bound", "event": "stuck", "handler": "slow"}
	if v, ok := metricValue(t, reg, "lariat_eventloop_outlived_stop_total", labels); !ok || v != 1 {
		t.Fatalf("lariat_eventloop_outlived_stop_total%v = %v (found %v), want 1", labels, v, ok)
	}
	select {
	case <-e.loop.Exited():
	case <-time.After(patience):
		t.Fatalf("the loop goroutine did not exit once the handler returned")
	}
}
