package cache

import (
	"errors"
	"time"

	"k8s.io/client-go/tools/cache"
)

// The event handlers of a restartableInformer: kept across runs, and
// added to each run's client-go informer as it starts.

// registration is a handler added to a restartableInformer; inner is its
// registration with the informer in (nil while it waits for a run).
type registration struct {
	owner   *restartableInformer
	handler cache.ResourceEventHandler
	options cache.HandlerOptions
	in      cache.SharedIndexInformer
	inner   cache.ResourceEventHandlerRegistration
}

// HasSynced reports whether the handler's informer is running and has
// delivered its initial list to the handler.
func (r *registration) HasSynced() bool {
	r.owner.mu.Lock()
	defer r.owner.mu.Unlock()
	return r.inner != nil && r.owner.liveLocked() && r.inner.HasSynced()
}

// HasSyncedChecker is the checker of the handler's registration with the
// informer currently running; after a restart, ask again.
func (r *registration) HasSyncedChecker() cache.DoneChecker {
	r.owner.mu.Lock()
	defer r.owner.mu.Unlock()
	if r.inner == nil {
		return neverDone{}
	}
	return r.inner.HasSyncedChecker()
}

type neverDone struct{}

func (neverDone) Name() string          { return "handler not added to a running informer" }
func (neverDone) Done() <-chan struct{} { return nil }

func (i *restartableInformer) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithOptions(handler, cache.HandlerOptions{})
}

func (i *restartableInformer) AddEventHandlerWithResyncPeriod(handler cache.ResourceEventHandler, resyncPeriod time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithOptions(handler, cache.HandlerOptions{ResyncPeriod: &resyncPeriod})
}

// AddEventHandlerWithOptions adds handler to the running informer, or keeps
// it for the next run when the last run's context has ended. It stays
// registered across restarts until RemoveEventHandler.
func (i *restartableInformer) AddEventHandlerWithOptions(handler cache.ResourceEventHandler, options cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if _, keysOnly := handler.(KeyOnlyHandler); i.codec != nil && !keysOnly {
		handler = decodingHandler{handler: handler, failed: i.decodeFailed}
	}
	if i.stream != nil {
		handler = newEarlyHandler(handler)
	}
	r := &registration{owner: i, handler: handler, options: options}
	if !i.current.IsStopped() {
		inner, err := i.current.AddEventHandlerWithOptions(handler, options)
		switch {
		case err == nil:
			r.in, r.inner = i.current, inner
		case !i.current.IsStopped():
			return nil, err
		}
		// Stopped meanwhile: the handler waits for the next run.
	}
	i.handlers[r] = struct{}{}
	return r, nil
}

// RemoveEventHandler removes a handler added to this informer. Like
// client-go's, it is idempotent and does not wait for events in flight.
func (i *restartableInformer) RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(*registration)
	if !ok || r.owner != i {
		return errors.New("cache: handler registration of another informer")
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	delete(i.handlers, r)
	if h, ok := r.handler.(*earlyHandler); ok {
		h.drop()
	}
	if r.inner == nil {
		return nil
	}
	in, inner := r.in, r.inner
	r.in, r.inner = nil, nil
	return in.RemoveEventHandler(inner)
}
