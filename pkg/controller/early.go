package controller

import (
	"sync"

	lariatcache "github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

// earlyRun is the state of a run whose workers started before its
// informer synced, because the informer streams its first list
// (cache.Options.StreamInitialList): keys are read with GetStreamed, which
// answers for the objects the stream has handed out so far. A miss then
// says nothing of the object (it may not have been listed yet), so the key
// is parked, never handled as gone, and queued again once the informer has
// synced and the store can tell.
type earlyRun struct {
	reader lariatcache.StreamReader

	mu sync.Mutex
	// synced is set once the informer synced and the parked keys were
	// queued again: a key that misses after that is queued at once.
	synced bool
	parked map[string]struct{}
}

// streamReader returns the controller's informer as a StreamReader when it
// streams its first list now, else nil.
func (c *controller) streamReader() lariatcache.StreamReader {
	if r, ok := c.informer.(lariatcache.StreamReader); ok && r.StreamsInitialList() {
		return r
	}
	return nil
}

// read reads key for the pass of r under hand-out t. A run that serves
// the store reads it under the known keys' lock (readKnown), and so does
// an early run once its informer has synced: the store then holds the
// whole list, which is all GetStreamed would read, and the read and its
// record are one step against a deletion's notification (see queueGone).
// Before the sync, an early run reads what was streamed, outside that
// lock, so it records t as having read before it does: a deletion handed
// out during that read queues the key again, and when the read missed,
// the pass leaves the telling to that pass (when it hit, the handlers are
// given the object, then its absence by that pass).
func (c *controller) read(r *run, key string, t workqueue.Ticket) (obj any, exists, ok bool, err error) {
	if r.early == nil || c.informer.HasSynced() {
		return c.readKnown(key, t, r.gen, false)
	}
	watched := c.known.reading(key, t, r.gen)
	obj, exists, ok, err = c.get(r, key)
	if err == nil && ok && !exists {
		// A deletion queued during the read queued the key again: the
		// pass then leaves the telling to that pass (see yields).
		return c.readKnown(key, t, r.gen, watched)
	}
	return obj, exists, ok, err
}

// get reads key for a pass of r. ok is false when the pass must wait for
// the sync: the object was not streamed yet, and the key is parked.
func (c *controller) get(r *run, key string) (obj any, exists, ok bool, err error) {
	e := r.early
	if e == nil {
		obj, exists, err = c.informer.GetStore().GetByKey(key)
		return obj, exists, true, err
	}
	obj, exists, synced, err := e.reader.GetStreamed(key)
	if err != nil || exists || synced {
		return obj, exists, true, err
	}
	e.mu.Lock()
	if e.synced {
		// The informer synced since GetStreamed looked: the store can
		// tell now, in the key's next pass.
		e.mu.Unlock()
		r.queue.AddWithPriority(key, workqueue.High)
		return nil, false, false, nil
	}
	if e.parked == nil {
		e.parked = map[string]struct{}{}
	}
	e.parked[key] = struct{}{}
	e.mu.Unlock()
	return nil, false, false, nil
}

// syncedEarly queues again the keys parked before the informer synced.
// They are queued at High priority: a key that missed was not one the
// stream had handed out (those hit), so it was queued by Enqueue or a
// related kind, a real change that goes before initial-list items.
func (e *earlyRun) syncedEarly(queue *workqueue.Queue[string]) {
	e.mu.Lock()
	e.synced = true
	parked := e.parked
	e.parked = nil
	e.mu.Unlock()
	for key := range parked {
		queue.AddWithPriority(key, workqueue.High)
	}
}
