package generic_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/generic"
)

// TestRunWaitsForTheWorkBoundToIt: the factory's Run returns only once the
// work bound to it (Bind) whose context ended has stopped, with that
// work's error joined to its own; work whose context is still live is not
// the run's and is not waited for; and a work waited for is not waited for
// again by the next run (a new term).
func TestRunWaitsForTheWorkBoundToIt(t *testing.T) {
	f, err := generic.NewFactoryFromConfig(cp.Config(), runtime.NewScheme(), nil)
	if err != nil {
		t.Fatal(err)
	}
	stillRunning := errors.New("bound work still running")
	waiting, release := make(chan struct{}), make(chan struct{})
	var calls, liveCalls atomic.Int32
	term, end := context.WithCancel(t.Context())
	f.Bind(term, func(context.Context) error {
		if calls.Add(1) == 1 {
			close(waiting)
		}
		<-release
		return stillRunning
	})
	f.Bind(t.Context(), func(context.Context) error {
		liveCalls.Add(1)
		return errors.New("a live work was waited for")
	})
	runErr := make(chan error, 1)
	go func() { runErr <- f.Run(term, 1) }()
	end()
	<-waiting
	select {
	case err := <-runErr:
		t.Fatalf("Run returned (%v) while the work bound to it, its context ended, had not stopped", err)
	default:
	}
	close(release)
	var got error
	select {
	case got = <-runErr:
	case <-time.After(timeout):
		t.Fatal("Run did not return once the bound work stopped")
	}
	if !errors.Is(got, stillRunning) {
		t.Fatalf("Run: %v, want the bound work's error joined", got)
	}
	next, endNext := context.WithCancel(t.Context())
	endNext()
	if err := f.Run(next, 1); err != nil {
		t.Fatalf("the next run: %v, want nil (the work was waited for by the last run)", err)
	}
	if n, live := calls.Load(), liveCalls.Load(); n != 1 || live != 0 {
		t.Fatalf("the ended work was waited for %d times (want 1), the live one %d times (want 0)", n, live)
	}
}
