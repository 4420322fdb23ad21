package controller

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
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
	mu   sync.Mutex
	keys map[string]knownKey
	// gen counts the runs whose queues the records were reset for (see
	// newQueue): the records speak of run gen's queue alone, so a pass of
	// an earlier run, still ending, must not mark them.
	gen uint64
}

// knownKey is what a controller keeps of a known key.
type knownKey struct {
	// queued is set when a deletion event for it was queued in the
	// current run, or a pass found it gone: a pass that tells the
	// handlers is on its way.
	queued bool
	// read is the hand-out of the current run's queue that last read the
	// key's object from the store (see readKnown); a worker holding the
	// key under another hand-out has not read it yet.
	read workqueue.Ticket
	// telling is set while a pass, of any run, that found the object gone
	// tells the handlers (see readKnown and toldEnd): the next Start keeps
	// the key queued, so that its comparison does not queue a second
	// telling, and the pass hands the key to the run current when it ends
	// if its own run's retry is gone.
	telling bool
	// uid is the UID of the object the handlers were last given under
	// the key (empty before they were given one): a Gate told of the
	// key's absence compares it with what the API server has under that
	// name (see AbsentUID).
	uid types.UID
	// cachedUID is the UID of the object the cache last had under the
	// key: the one held, when the handlers were given none (it went
	// before a pass gave it to them).
	cachedUID types.UID
	// goneRV is the resourceVersion of the informer's delete event for
	// the key, when it gave the object's final state and
	// Options.HeldDeletion said it was this replica's: a deletion that,
	// untold when the run stops, is carried to the replica's next factory
	// (see CarriedDeletions).
	goneRV string
	// carried says the key was handed over by an earlier factory.
	carried bool
	// lastRV is the resourceVersion of the object when the cache last
	// had it: an earlier factory that hands the key over with no delete
	// event seen (its informer never saw the object go: a partition, a
	// dropped notification) lets the next one judge, from the object's
	// history after it, whether it went while this replica's.
	lastRV string
	// held is, for a carried key, the earlier factory's HeldDeletion: it
	// tells from labels in that history whether the object was still
	// that factory's.
	held func(labels map[string]string) bool
}

// addCached records that the cache has key's object, of UID uid and
// resourceVersion rv (its event is queued).
func (k *knownKeys) addCached(key string, uid types.UID, rv string) {
	k.add(key, "", rv)
	if uid != "" {
		k.mu.Lock()
		e := k.keys[key]
		e.cachedUID = uid
		k.keys[key] = e
		k.mu.Unlock()
	}
}

// add records that the cache has key's object (its event is queued), and,
// when uid is not empty, that the handlers are given the object of that
// UID; rv, when not empty, is the object's resourceVersion.
func (k *knownKeys) add(key string, uid types.UID, rv string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keys == nil {
		k.keys = map[string]knownKey{}
	}
	e := k.keys[key]
	e.queued = false
	e.goneRV, e.carried, e.held = "", false, nil // the cache has the object (again)
	if uid != "" {
		e.uid = uid
	}
	if rv != "" {
		e.lastRV = rv
	}
	k.keys[key] = e
}

// uidOf returns the UID of the object held under key (see heldUID).
func (k *knownKeys) uidOf(key string) types.UID {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.keys[key].heldUID()
}

// heldUID is the UID the handlers were last given or, when they were given
// none, the one the cache last had: without it, an object created anew
// under the name would be taken for one the handlers never saw go.
func (e knownKey) heldUID() types.UID {
	if e.uid != "" {
		return e.uid
	}
	return e.cachedUID
}

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
	return k.goneLocked(key)
}

// goneLocked is gone with k.mu held.
func (k *knownKeys) goneLocked(key string) bool {
	e, ok := k.keys[key]
	if !ok || e.queued {
		return false
	}
	e.queued = true
	k.keys[key] = e
	return true
}

func (k *knownKeys) has(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.keys[key]
	return ok
}

// newQueue forgets which deletion events were queued: the last run's queue,
// which held them, is dropped. A key whose absence a pass is telling the
// handlers stays queued: that pass tells them, and if it fails it queues
// the key in the run then current (toldEnd). It returns the new run's
// generation, which its passes give readKnown and reading.
func (k *knownKeys) newQueue() uint64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	for key, e := range k.keys {
		k.keys[key] = knownKey{queued: e.telling, telling: e.telling, uid: e.uid, cachedUID: e.cachedUID, goneRV: e.goneRV, carried: e.carried, lastRV: e.lastRV, held: e.held}
	}
	k.gen++
	return k.gen
}

// unqueued returns the known keys with no deletion event queued.
func (k *knownKeys) unqueued() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]string, 0, len(k.keys))
	for key, e := range k.keys {
		if !e.queued {
			out = append(out, key)
		}
	}
	return out
}

// queueGone queues the pass that gives the handlers key's absence, which a
// deletion event or the comparison after a relist found, unless the
// handlers were told already or a pass that reads the store after now is
// on its way: the key is queued, or a worker holds it and has not read it
// yet (the store dropped the object before its deletion was handed out,
// so that read finds it gone). The decision and the add are one step under
// the lock a pass's read takes (readKnown): a worker holding the key reads
// it either before (the key is then queued again after its pass) or
// after; and a pass that tells the handlers and ends between the decision
// and the add cannot leave the key queued for a second telling.
//
// A Start that ran wholly between taking the queue and taking the lock
// shut that queue down and reset the records: the generation tells, and
// the decision is made again against the new run.
func (c *controller) queueGone(key string) {
	for !c.tryQueueGone(key) {
	}
}

// tryQueueGone is one attempt of queueGone; it returns false when a Start
// came between taking the run's queue and taking the known keys' lock.
func (c *controller) tryQueueGone(key string) bool {
	c.startLock.Lock()
	q, gen := c.queue, c.known.currentGen()
	if q == nil || c.runCtx.Err() != nil {
		// Stopped or stopping: the next run takes it.
		if c.known.gone(key) {
			c.startKeys = append(c.startKeys, startKey{key: key, priority: workqueue.High})
		}
		c.startLock.Unlock()
		return true
	}
	c.startLock.Unlock()
	c.known.mu.Lock()
	defer c.known.mu.Unlock()
	if gen != c.known.gen {
		return false
	}
	if c.known.goneLocked(key) {
		q.AddUnlessUnread(key, workqueue.High, func(t workqueue.Ticket) bool { return c.known.keys[key].read != t })
	}
	return true
}

// currentGen returns the generation of the run the records speak of.
func (k *knownKeys) currentGen() uint64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.gen
}

// ended forgets key once the handlers were told it is gone (or a gate
// refused the pass of its absence), unless the cache has the object
// again: it was created anew meanwhile, and its next pass is on its way.
//
// It also drops the key's pending AddAfter in queue (the queue of the run
// whose pass ended), and the run again that such an add asked for by
// coming due during this pass: a retry of a pass that failed on the object
// before it went, a fight's hold, or an EnqueueAfter issued before now,
// was asked for a pass that reads the store after it, and this one did;
// left, it would run after the key was forgotten, and, without a Gate
// (which skips the absence of a key it does not know), tell the handlers a
// second time that the object is gone. A key queued, or asked for by an
// add that was not delayed, is left alone: an Enqueue of an absent key
// still gives the handlers nil, as lasso's does.
func (c *controller) ended(key string, queue *workqueue.Queue[string], ticket workqueue.Ticket) {
	c.known.mu.Lock()
	defer c.known.mu.Unlock()
	if _, exists, err := c.informer.GetStore().GetByKey(key); err == nil && !exists {
		delete(c.known.keys, key)
		// By ticket (the pass's hand-out): CancelAfter would look the key
		// up in the queue's map, a cache miss per deletion in a long queue.
		queue.CancelAfterTicket(key, ticket)
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
		if _, exists, err := store.GetByKey(key); err == nil && !exists {
			c.queueGone(key)
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

// reading records, for a known key, that hand-out t of the run of
// generation gen reads its object from now on (see readKnown), for a read
// that cannot be made under k.mu; a run no longer current marks nothing.
// It returns whether it marked a key whose deletion was not queued: a
// deletion queued from now on queues the key again (see yields).
func (k *knownKeys) reading(key string, t workqueue.Ticket, gen uint64) (watched bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e, ok := k.keys[key]; ok && gen == k.gen {
		e.read = t
		k.keys[key] = e
		return !e.queued
	}
	return false
}
