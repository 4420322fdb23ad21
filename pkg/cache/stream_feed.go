package cache

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
)

// The restartableInformer's side of a stream of initial events
// (initialStream): what the stream hands out goes to the handlers added to
// the current run (earlyHandler), and answers GetStreamed until the sync.
// Only the run's newest stream hands out, until it breaks: the reflector
// lists again from the start in a new stream when one breaks, and nothing
// keeps what the broken one handed out current.

// deliverEarly queues obj, one object of stream, for the handlers of the
// current run, and keeps it for GetStreamed.
func (i *restartableInformer) deliverEarly(obj any, stream uint64) {
	i.handEarly(obj, stream, func() { i.recordStreamedLocked(obj) })
}

// streamGone is queued for a handler where the stream passed the deletion
// of the object of key.
type streamGone struct{ key string }

// goneEarly forgets the object of key, whose deletion stream passed, and
// queues its deletion for the handlers of the current run.
func (i *restartableInformer) goneEarly(key string, stream uint64) {
	i.handEarly(streamGone{key}, stream, func() { delete(i.streamed, key) })
}

// handEarly runs record (under i.mu) and queues item for each handler of
// the current run, when that run may be fed early and has not synced, and
// stream is the one that hands out (streamedBy). The one path by which
// the stream reaches the handlers: items are queued in the order the
// stream passed them.
func (i *restartableInformer) handEarly(item any, stream uint64, record func()) {
	i.mu.Lock()
	if !i.feedingLocked() || stream != i.streamedBy {
		// A stream stopped while it handed this out (a newer one may have
		// begun): what it would tell is the newer stream's to tell.
		i.mu.Unlock()
		return
	}
	record()
	handlers, _ := i.earlyHandlersLocked(i.current)
	i.mu.Unlock()
	for _, h := range handlers {
		h.early(item)
	}
}

// earlyHandlersLocked returns the handlers added to the run of informer,
// with their registrations with it; i.mu must be held. It is how each
// hand-out of the stream, its end and the flush after the sync find the
// handlers.
func (i *restartableInformer) earlyHandlersLocked(informer cache.SharedIndexInformer) ([]*earlyHandler, []cache.ResourceEventHandlerRegistration) {
	var handlers []*earlyHandler
	var regs []cache.ResourceEventHandlerRegistration
	for r := range i.handlers {
		if h, ok := r.handler.(*earlyHandler); ok && r.in == informer {
			handlers, regs = append(handlers, h), append(regs, r.inner)
		}
	}
	return handlers, regs
}

// streamStarted makes stream, just begun, the one that hands out: the
// reflector asks for a new stream when one broke, which lists again from
// the start, so GetStreamed answers what an earlier stream handed out
// only once this one hands it too. The handlers keep what they were
// given; flush settles it once their registration has synced.
func (i *restartableInformer) streamStarted(stream uint64) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.feedingLocked() {
		i.streamed, i.streamedBy = nil, stream
	}
}

// streamBroke forgets what stream handed out, when it ended before its
// bookmark: nothing keeps that current, so GetStreamed answers none of it
// until the next stream hands it again.
func (i *restartableInformer) streamBroke(stream uint64) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.streamedBy == stream {
		i.streamed, i.streamedBy = nil, 0
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
	handlers, regs := i.earlyHandlersLocked(informer)
	i.feedEarly = false
	i.streamed, i.streamedBy = nil, 0 // the store has them all now
	i.mu.Unlock()
	// Each handler on its own: one slow with its Replace must not hold up
	// the deletes due to the others.
	for n, h := range handlers {
		go func() {
			if waitSynced(ctx, regs[n].HasSynced) {
				h.flush()
			}
		}()
	}
}

// waitHandlersBegun waits until each handler of the current run that the
// stream handed an object has been called with one, or ctx ends: the
// stream passes its end on to the reflector (which stores the whole list)
// only then, so handlers are given the first objects before the list is
// in, as Options.StreamInitialList promises, however late their
// goroutines are scheduled. It never waits for a handler call to return.
func (i *restartableInformer) waitHandlersBegun(ctx context.Context) {
	i.mu.Lock()
	handlers, _ := i.earlyHandlersLocked(i.current)
	i.mu.Unlock()
	for _, h := range handlers {
		h.waitBegun(ctx)
	}
}

// waitSynced polls synced until it is true or ctx ends (client-go's
// WaitForCacheSync logs on every call).
func waitSynced(ctx context.Context, synced func() bool) bool {
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) { return synced(), nil })
	return err == nil
}
