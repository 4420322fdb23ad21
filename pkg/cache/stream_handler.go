package cache

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

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
// before any later event and once its registration has synced.
type earlyHandler struct {
	handler cache.ResourceEventHandler

	// mu serializes the stream's calls with the informer's: a handler is
	// never called concurrently.
	mu sync.Mutex
	// given holds what was handed early and not yet seen in the Replace,
	// by key.
	given map[string]any
}

var _ cache.ResourceEventHandler = (*earlyHandler)(nil)

// early hands obj, one object of the stream, to the handler.
func (h *earlyHandler) early(obj any) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return // the Replace hands it
	}
	h.mu.Lock()
	defer h.mu.Unlock()
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

// OnAdd drops an add of the initial list the handler was given early.
func (h *earlyHandler) OnAdd(obj any, isInInitialList bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !isInInitialList {
		h.flushLocked()
	} else if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		if old, ok := h.given[key]; ok {
			delete(h.given, key)
			if resourceVersionOf(old) != resourceVersionOf(obj) {
				h.handler.OnUpdate(old, obj)
			}
			return
		}
	}
	h.handler.OnAdd(obj, isInInitialList)
}

// OnUpdate comes after the initial list.
func (h *earlyHandler) OnUpdate(oldObj, newObj any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.flushLocked()
	h.handler.OnUpdate(oldObj, newObj)
}

// OnDelete comes after the initial list.
func (h *earlyHandler) OnDelete(obj any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.flushLocked()
	h.handler.OnDelete(obj)
}

// flush hands as deleted what was given early and not listed; call it
// once the registration has synced (its Replace is delivered).
func (h *earlyHandler) flush() {
	h.mu.Lock()
	defer h.mu.Unlock()
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

// deliverEarly hands obj, one object of a stream of initial events, to the
// handlers added to the current run, when that run may be fed early and
// has not synced.
func (i *restartableInformer) deliverEarly(obj any) {
	i.mu.Lock()
	if !i.feedingLocked() {
		i.mu.Unlock()
		return
	}
	i.recordStreamedLocked(obj)
	var handlers []*earlyHandler
	for r := range i.handlers {
		if h, ok := r.handler.(*earlyHandler); ok && r.in == i.current {
			handlers = append(handlers, h)
		}
	}
	i.mu.Unlock()
	for _, h := range handlers {
		h.early(obj)
	}
}

// feeding reports whether the current run may hand its handlers the
// objects of a stream early.
func (i *restartableInformer) feeding() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.feedingLocked()
}

func (i *restartableInformer) feedingLocked() bool { return i.feedEarly && !i.current.HasSynced() }

// flushEarly hands each handler, once its registration with informer has
// synced, the deletes of what it was given early and the list lacked. It
// runs in every run of a streaming informer: what a first run stopped
// before its sync handed out early is settled by the next run's list.
func (i *restartableInformer) flushEarly(ctx context.Context, informer cache.SharedIndexInformer) {
	if !waitSynced(ctx, informer.HasSynced) {
		return
	}
	i.stream.clearMarks()
	i.mu.Lock()
	type pending struct {
		h     *earlyHandler
		inner cache.ResourceEventHandlerRegistration
	}
	var all []pending
	for r := range i.handlers {
		if h, ok := r.handler.(*earlyHandler); ok && r.in == informer {
			all = append(all, pending{h, r.inner})
		}
	}
	i.feedEarly = false
	i.streamed = nil // the store has them all now
	i.mu.Unlock()
	for _, p := range all {
		if waitSynced(ctx, p.inner.HasSynced) {
			p.h.flush()
		}
	}
}

// waitSynced polls synced until it is true or ctx ends (client-go's
// WaitForCacheSync logs on every call).
func waitSynced(ctx context.Context, synced func() bool) bool {
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) { return synced(), nil })
	return err == nil
}
