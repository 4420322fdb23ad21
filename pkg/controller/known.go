package controller

import (
	"sync"

	lariatcache "github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

// knownKeys are the keys whose end a controller's handlers may not have
// seen: the cache had the object (the controller's event handler was told
// of it) or the handlers were given it, and no pass has since given the
// handlers its absence and seen them return, nor has a Gate refused such a
// pass (the object is not this replica's to see go).
//
// It is what makes a deletion reach the handlers when its event does not:
// client-go drops the notifications an informer had not delivered when it
// stops, a stopping run drops its queue, and an informer rebuilt after a
// restart or a relist is seeded from a store that already dropped the
// object. After such a rebuild, once the new list is all in the store,
// every known key the store lacks is queued, and its pass gives the
// handlers nil. It is also what a Gate's deletion rests on: a gated
// controller gives its handlers the absence only of a known key.
type knownKeys struct {
	mu   sync.Mutex
	keys map[string]struct{}
}

func (k *knownKeys) add(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keys == nil {
		k.keys = map[string]struct{}{}
	}
	k.keys[key] = struct{}{}
}

func (k *knownKeys) has(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.keys[key]
	return ok
}

func (k *knownKeys) list() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]string, 0, len(k.keys))
	for key := range k.keys {
		out = append(out, key)
	}
	return out
}

// ended forgets key once the handlers were told it is gone (or a gate
// refused the pass of its absence), unless the cache has the object
// again: it was created anew meanwhile, and its next pass is on its way.
func (c *controller) ended(key string) {
	c.known.mu.Lock()
	defer c.known.mu.Unlock()
	if _, exists, err := c.informer.GetStore().GetByKey(key); err == nil && !exists {
		delete(c.known.keys, key)
	}
}

// enqueueGone queues every known key the informer's store lacks, so that
// the handlers are told it is gone. Call it only when the store holds a
// complete list (the informer has synced): on a partial view, absence is
// not deletion.
func (c *controller) enqueueGone() {
	store := c.informer.GetStore()
	for _, key := range c.known.list() {
		if _, exists, err := store.GetByKey(key); err == nil && !exists {
			c.add(startKey{key: key, priority: workqueue.High})
		}
	}
}

// onRelisted has enqueueGone called whenever the informer, rebuilt, has
// its whole new list in its store (see cache.RelistNotifier); it returns
// the function that stops that. An informer that is never rebuilt needs
// nothing: its events are never dropped while the controller runs.
func (c *controller) onRelisted() (remove func()) {
	if r, ok := c.informer.(lariatcache.RelistNotifier); ok {
		return r.OnRelisted(c.enqueueGone)
	}
	return func() {}
}
