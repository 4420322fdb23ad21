package controller

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

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
// handlers nil; keys whose deletion event this run's queue already holds
// are left to it, so that the handlers are not told twice. It is also what a Gate's deletion rests on: a gated
// controller gives its handlers the absence only of a known key.
type knownKeys struct {
	mu sync.Mutex
	// keys maps each known key to whether a deletion event for it was
	// queued in the current run (its pass is on its way).
	keys map[string]bool
}

// add records that the cache has key's object (its event is queued).
func (k *knownKeys) add(key string) { k.set(key, false) }

// gone records that key's deletion is being queued, and tells whether to
// queue it: not for a key the handlers were already told is gone, nor for
// one whose deletion pass is already queued or running (that pass reads
// the store after the deletion, so it tells the handlers), nor for one
// whose running pass, queued by an earlier event, found it gone (see
// readGone). After a relist, client-go delivers the new list's deletions
// to the event handler in the background, while the comparison that
// follows a relist (enqueueGone) may already have queued the key:
// queueing it again, during that pass or after it, would tell the
// handlers twice.
func (k *knownKeys) gone(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if queued, ok := k.keys[key]; !ok || queued {
		return false
	}
	k.keys[key] = true
	return true
}

func (k *knownKeys) set(key string, gone bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keys == nil {
		k.keys = map[string]bool{}
	}
	k.keys[key] = gone
}

func (k *knownKeys) has(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.keys[key]
	return ok
}

// newQueue forgets which deletion events were queued: the last run's queue,
// which held them, is dropped.
func (k *knownKeys) newQueue() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for key := range k.keys {
		k.keys[key] = false
	}
}

// unqueued returns the known keys with no deletion event queued.
func (k *knownKeys) unqueued() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]string, 0, len(k.keys))
	for key, gone := range k.keys {
		if !gone {
			out = append(out, key)
		}
	}
	return out
}

// readGone reads key again, once a pass found its object gone, and if it
// still is, marks a known key's deletion as queued: this pass tells the
// handlers, having read the store after the object went. The informer
// drops an object from its store before it hands out the deletion's
// notification, and hands it out in the background, so that notification
// may reach the event handler only now, while a pass queued by an earlier
// event of the object (an update that removed its last finalizer) has
// already found it gone: it must not queue the key again (see gone). The
// read and the mark are one step under the lock gone takes, so a
// notification is either seen by this pass or arrives after the mark. An
// object of that name created meanwhile is read as it is, and its add
// event re-marks the key as not queued (see add).
func (c *controller) readGone(key string) (obj any, exists bool, err error) {
	c.known.mu.Lock()
	defer c.known.mu.Unlock()
	obj, exists, err = c.informer.GetStore().GetByKey(key)
	if err == nil && !exists {
		if _, ok := c.known.keys[key]; ok {
			c.known.keys[key] = true
		}
	}
	return obj, exists, err
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

// enqueueGone queues every known key the informer's store lacks and whose
// deletion event is not queued, so that the handlers are told it is gone,
// once reg (the controller's event handler registration) has synced: the
// store then holds a complete list (on a partial view, absence is not
// deletion), and the handler has been given every event of it, the
// deletions the new list revealed included. It gives up when ctx ends.
func (c *controller) enqueueGone(ctx context.Context, reg cache.ResourceEventHandlerRegistration) {
	err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		return reg.HasSynced(), nil
	})
	if err != nil {
		return
	}
	store := c.informer.GetStore()
	for _, key := range c.known.unqueued() {
		if _, exists, err := store.GetByKey(key); err == nil && !exists && c.known.gone(key) {
			c.add(startKey{key: key, priority: workqueue.High})
		}
	}
}

// relisted is the informer's OnRelisted hook: a relist may have dropped
// events, so the running controller compares, in the background.
func (c *controller) relisted() {
	c.startLock.Lock()
	ctx, reg := c.runCtx, c.reg
	c.startLock.Unlock()
	if reg == nil || ctx == nil || ctx.Err() != nil {
		return // stopped: the next run compares
	}
	go c.enqueueGone(ctx, reg)
}

// onRelisted has relisted called whenever the informer, rebuilt, has its
// whole new list in its store (see cache.RelistNotifier); it returns the
// function that stops that. An informer that is never rebuilt needs
// nothing: its events are never dropped while the controller runs.
func (c *controller) onRelisted() (remove func()) {
	if r, ok := c.informer.(lariatcache.RelistNotifier); ok {
		return r.OnRelisted(c.relisted)
	}
	return func() {}
}
