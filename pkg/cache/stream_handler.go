package cache

import (
	"context"
	"sync"

	"k8s.io/client-go/tools/cache"
)

// earlyHandler is a handler of an informer that streams its initial list
// (Options.StreamInitialList). It is given each object of the stream as it
// arrives, as an add of the initial list; when the informer's Replace hands
// it the same object again, it drops it, and hands an update instead when
// the object changed in between (a broken stream was listed again). What it
// was given early but the informer's list did not have (the object went
// away while a broken stream was listed again, or while the factory was
// stopped before the sync and the next run listed) it hands as deleted,
// before any later event of that object and once its registration has
// synced.
//
// The stream only queues each object for the handler: a goroutine of the
// handler's own hands them over, as client-go's processorListener does
// for the informer's events, so a slow handler holds up neither the stream
// (nor the informer's sync) nor the other handlers.
type earlyHandler struct {
	handler cache.ResourceEventHandler

	// call is held across every call of handler, which is therefore never
	// called concurrently (the stream's hand-outs and the informer's
	// events), and guards given.
	call sync.Mutex
	// given holds what was handed early and not yet seen in the Replace,
	// by key.
	given map[string]any

	// mu guards the fields below; it is never held while calling handler,
	// so the stream never waits for the handler.
	mu sync.Mutex
	// queue holds what the stream handed out and the handler was not
	// given yet, in the stream's order; draining is set while a goroutine
	// hands it over.
	queue    []any
	draining bool
	// begun is closed once the handler was first called with an object of
	// the stream, or was removed; handed is set once the stream handed it
	// one.
	begun   chan struct{}
	handed  bool
	removed bool
}

var _ cache.ResourceEventHandler = (*earlyHandler)(nil)

func newEarlyHandler(handler cache.ResourceEventHandler) *earlyHandler {
	return &earlyHandler{handler: handler, begun: make(chan struct{})}
}

// early queues obj, one object of the stream, for the handler; it does not
// wait for the handler.
func (h *earlyHandler) early(obj any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.removed {
		return
	}
	h.handed = true
	h.queue = append(h.queue, obj)
	if !h.draining {
		h.draining = true
		go h.drain()
	}
}

// drain hands the queue over until it is empty.
func (h *earlyHandler) drain() {
	for {
		h.call.Lock()
		h.mu.Lock()
		batch := h.queue
		h.queue = nil
		if len(batch) == 0 {
			h.draining = false
			h.mu.Unlock()
			h.call.Unlock()
			return
		}
		h.mu.Unlock()
		h.giveLocked(batch)
		h.call.Unlock()
	}
}

// catchUpLocked hands over what the stream queued and the drain has not
// yet, so that no event of the informer overtakes it; h.call must be held.
func (h *earlyHandler) catchUpLocked() {
	h.mu.Lock()
	batch := h.queue
	h.queue = nil
	h.mu.Unlock()
	h.giveLocked(batch)
}

// giveLocked hands the handler the objects of the stream in batch; h.call
// must be held.
func (h *earlyHandler) giveLocked(batch []any) {
	if len(batch) == 0 {
		return
	}
	h.mu.Lock()
	if !h.removed {
		select {
		case <-h.begun:
		default:
			close(h.begun)
		}
	}
	h.mu.Unlock()
	for _, obj := range batch {
		// A handler removed meanwhile is called no more: drop took the
		// queue, but not this batch, already out of it.
		if h.isRemoved() {
			return
		}
		h.giveOneLocked(obj)
	}
}

func (h *earlyHandler) isRemoved() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.removed
}

func (h *earlyHandler) giveOneLocked(obj any) {
	if g, ok := obj.(streamGone); ok {
		// Told it exists, the handler is told it went away, once: a
		// later add of the key (created again) is then an add.
		if old, ok := h.given[g.key]; ok {
			delete(h.given, g.key)
			h.handler.OnDelete(cache.DeletedFinalStateUnknown{Key: g.key, Obj: old})
		}
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return // the Replace hands it
	}
	if h.given == nil {
		h.given = map[string]any{}
	}
	if old, ok := h.given[key]; ok {
		// A stream that broke handed it before.
		h.given[key] = obj
		if resourceVersionOf(old) != resourceVersionOf(obj) {
			h.handler.OnUpdate(old, obj)
		}
		return
	}
	h.given[key] = obj
	h.handler.OnAdd(obj, true)
}

// waitBegun waits until the handler was first called with an object of
// the stream, if the stream handed it one, or ctx ends. It waits for the
// handler's goroutine to be scheduled, never for a handler call to return.
func (h *earlyHandler) waitBegun(ctx context.Context) {
	h.mu.Lock()
	handed := h.handed
	h.mu.Unlock()
	if !handed {
		return
	}
	select {
	case <-h.begun:
	case <-ctx.Done():
	}
}

// drop forgets what the stream queued and not handed over: the handler was
// removed (client-go drops a removed handler's pending events too).
func (h *earlyHandler) drop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removed = true
	h.queue = nil
	select {
	case <-h.begun:
	default:
		close(h.begun)
	}
}

// OnAdd drops an add of the initial list the handler was given early.
func (h *earlyHandler) OnAdd(obj any, isInInitialList bool) {
	h.call.Lock()
	defer h.call.Unlock()
	h.catchUpLocked()
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		if old, ok := h.given[key]; ok {
			delete(h.given, key)
			switch {
			case !isInInitialList:
				// Created again after the list that lacked what it
				// was given: that one went first.
				h.handler.OnDelete(cache.DeletedFinalStateUnknown{Key: key, Obj: old})
			case resourceVersionOf(old) != resourceVersionOf(obj):
				h.handler.OnUpdate(old, obj)
				return
			default:
				return
			}
		}
	}
	h.handler.OnAdd(obj, isInInitialList)
}

// OnUpdate settles what the handler was given early of the object: it
// exists. Other objects' are settled by flush, not here: a rebuilt run's
// Replace hands updates for objects the handler has not been handed yet,
// which exist although the handler still holds them as given (its
// registration had not synced when the last run stopped).
func (h *earlyHandler) OnUpdate(oldObj, newObj any) {
	h.call.Lock()
	defer h.call.Unlock()
	h.catchUpLocked()
	h.settleLocked(newObj)
	h.handler.OnUpdate(oldObj, newObj)
}

// OnDelete settles what the handler was given early of the object: the
// delete tells the handler it is gone, once.
func (h *earlyHandler) OnDelete(obj any) {
	h.call.Lock()
	defer h.call.Unlock()
	h.catchUpLocked()
	h.settleLocked(obj)
	h.handler.OnDelete(obj)
}

// settleLocked forgets what the handler was given early of obj's key, an
// object the informer hands it now; h.call must be held.
func (h *earlyHandler) settleLocked(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		delete(h.given, key)
	}
}

// flush hands as deleted what was given early and not listed; call it
// once the registration has synced (its Replace is delivered).
func (h *earlyHandler) flush() {
	h.call.Lock()
	defer h.call.Unlock()
	if h.isRemoved() {
		return
	}
	h.catchUpLocked()
	h.flushLocked()
}

func (h *earlyHandler) flushLocked() {
	for key, obj := range h.given {
		h.handler.OnDelete(cache.DeletedFinalStateUnknown{Key: key, Obj: obj})
	}
	h.given = nil
}

func resourceVersionOf(obj any) string {
	if o, ok := obj.(interface{ GetResourceVersion() string }); ok {
		return o.GetResourceVersion()
	}
	return ""
}
