package controlplanetest_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestRunWaitsForTheOperator: the test's cleanup returns only once the
// operator has returned, however long it takes to stop (within
// StopTimeout), and the cancellation it returns is no failure.
func TestRunWaitsForTheOperator(t *testing.T) {
	var stopped atomic.Bool
	t.Run("operator", func(t *testing.T) {
		controlplanetest.Run(t, func(ctx context.Context) error {
			<-ctx.Done()
			time.Sleep(100 * time.Millisecond) // an operator closing its loop and scheduler
			stopped.Store(true)
			return ctx.Err()
		})
	})
	if !stopped.Load() {
		t.Fatal("the test ended before its operator stopped")
	}
}
