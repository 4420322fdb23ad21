package cache

import (
	"context"

	"k8s.io/client-go/tools/cache"
)

// RelistNotifier is implemented by the informers a SharedCacheFactory hands
// out. Such an informer is rebuilt when its factory starts again and when
// its watch became too old to resume: the new one is seeded from the old
// one's store and lists again. Events the old one had not delivered to its
// handlers when it stopped are lost with it (client-go drops them), among
// them deletions its store had already applied; a handler that must see
// every object's end compares what it was told with the store once the new
// list is in it (see package controller).
type RelistNotifier interface {
	// OnRelisted calls fn each time a rebuilt run of the informer has its
	// whole first list in its store (it has synced), from a goroutine of
	// its own; fn must not block. The returned function stops the calls.
	OnRelisted(fn func()) (remove func())
}

var _ RelistNotifier = (*restartableInformer)(nil)

// relistHook is one OnRelisted registration.
type relistHook struct{ fn func() }

// OnRelisted implements RelistNotifier.
func (i *restartableInformer) OnRelisted(fn func()) (remove func()) {
	h := &relistHook{fn: fn}
	i.mu.Lock()
	if i.relisted == nil {
		i.relisted = map[*relistHook]struct{}{}
	}
	i.relisted[h] = struct{}{}
	i.mu.Unlock()
	return func() {
		i.mu.Lock()
		delete(i.relisted, h)
		i.mu.Unlock()
	}
}

// notifyRelisted calls the OnRelisted hooks once informer, a rebuilt run,
// has synced; it gives up when the run ends first (the next run notifies).
func (i *restartableInformer) notifyRelisted(ctx context.Context, informer cache.SharedIndexInformer) {
	select {
	case <-informer.HasSyncedChecker().Done():
	case <-ctx.Done():
		return
	}
	i.mu.Lock()
	hooks := make([]func(), 0, len(i.relisted))
	for h := range i.relisted {
		hooks = append(hooks, h.fn)
	}
	i.mu.Unlock()
	for _, fn := range hooks {
		fn()
	}
}
