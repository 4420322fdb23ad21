package cache

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrStillRunning is matched (errors.Is) by the errors that say work of a
// stopped run was still under way when the wait for it gave up: a
// *StillRunningError here, controller.StillRunningError for handlers.
var ErrStillRunning = errors.New("still running after the stop grace period")

// StillRunningError names the kinds whose informers were still delivering
// events to their handlers when Wait gave up.
type StillRunningError struct {
	// Kinds are the kinds whose informer runs had not returned.
	Kinds []schema.GroupVersionKind
	// Cause is why the wait stopped (the context's error).
	Cause error
}

// Error names the kinds.
func (e *StillRunningError) Error() string {
	names := make([]string, len(e.Kinds))
	for i, gvk := range e.Kinds {
		names[i] = KindLabel(gvk)
	}
	return fmt.Sprintf("informers still delivering events after their run ended (%v): %s", e.Cause, strings.Join(names, ", "))
}

// Is makes errors.Is(err, ErrStillRunning) hold.
func (e *StillRunningError) Is(target error) bool { return target == ErrStillRunning }

// Wait blocks until every informer run begun by Start has returned (its
// context ended and its event handlers returned), waiting for live runs'
// contexts to end. If ctx ends first it returns a *StillRunningError naming
// the kinds still running.
func (f *SharedCacheFactory) Wait(ctx context.Context) error {
	f.mu.Lock()
	kinds := maps.Clone(f.kinds)
	f.mu.Unlock()
	var still []schema.GroupVersionKind
	for gvk, k := range kinds {
		if !k.informer.wait(ctx) {
			still = append(still, gvk)
		}
	}
	if len(still) == 0 {
		return nil
	}
	slices.SortFunc(still, func(a, b schema.GroupVersionKind) int { return strings.Compare(KindLabel(a), KindLabel(b)) })
	return &StillRunningError{Kinds: still, Cause: ctx.Err()}
}

// wait blocks until the informer's run has returned, or ctx ends (then it
// returns false). A relist replaces the run under the same context, so the
// run is looked up again after each one returned.
func (i *restartableInformer) wait(ctx context.Context) bool {
	for {
		i.mu.Lock()
		done := i.done
		i.mu.Unlock()
		if done == nil {
			return true // never run
		}
		select {
		case <-done:
		case <-ctx.Done():
			return false
		}
		i.mu.Lock()
		same := i.done == done
		i.mu.Unlock()
		if same {
			return true
		}
	}
}
