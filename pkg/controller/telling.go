package controller

import "github.com/lariat-dev/lariat/pkg/controller/workqueue"

// readKnown reads key's object from the store for the pass of hand-out t
// of the run of generation gen and records, for a known key, that t has
// read it (see queueGone); when the object is gone it also marks the key's
// deletion as queued and being told: this pass tells the handlers, having
// read the store after the object went. The informer drops an object from
// its store before it hands out the deletion's notification, and hands it
// out in the background, so that notification may reach the event handler
// only now, while a pass queued by an earlier event of the object (an
// update that removed its last finalizer) has already found it gone: it
// must not queue the key again (see gone). The read and the records are
// one step under the lock gone and queueGone take, so a notification is
// handled either before the read or after the records. An object of that
// name created meanwhile is read as it is, and its add event marks the key
// as not queued (see add).
//
// ok is false when the pass must not tell the handlers the object is gone,
// because another pass is queued to (see yields). watched says the pass
// recorded itself as reading, while the key was not queued, before a read
// outside the lock that missed (see reading).
func (c *controller) readKnown(key string, t workqueue.Ticket, gen uint64, watched bool) (obj any, exists, ok bool, err error) {
	c.known.mu.Lock()
	defer c.known.mu.Unlock()
	obj, exists, err = c.informer.GetStore().GetByKey(key)
	e, known := c.known.keys[key]
	if !known || err != nil {
		return obj, exists, true, err
	}
	if !exists && c.known.yields(e, t, gen, watched) {
		return nil, false, false, nil
	}
	switch {
	case gen == c.known.gen:
		e.read = t
		if !exists {
			e.queued, e.telling = true, true
		}
	case !exists:
		// A pass of a run that is no longer current (the next Start reset
		// the records between its context check and this read), the first
		// to find the object gone: it tells, and the next run's comparison
		// (enqueueGone) must not queue a second telling. Its retry dies
		// with its run, so if it fails it hands the key over (toldEnd).
		e.queued, e.telling = true, true
	default:
		return obj, exists, true, nil // the records speak of another queue
	}
	c.known.keys[key] = e
	return obj, exists, true, nil
}

// yields tells whether a pass of hand-out t of the run of generation gen
// that found a key gone, with record e, must leave the telling to a pass
// queued for it, with k.mu held. For a pass of a run that is no longer
// current, the next run has the key queued (its comparison, or a deletion
// event, queued it after its Start reset the records): that run's pass,
// waiting for this one (per-key exclusion), tells the handlers. For a pass
// whose read outside the lock missed (watched), a deletion queued since
// the pass recorded itself as reading queued the key again after this
// pass (AddUnlessUnread saw a hand-out that had read): that pass reads
// after this one and tells the handlers.
func (k *knownKeys) yields(e knownKey, t workqueue.Ticket, gen uint64, watched bool) bool {
	if gen != k.gen {
		return e.queued
	}
	return watched && e.queued && e.read == t
}

// toldEnd ends the telling of key's absence by a pass of the run of
// generation gen (see readKnown), once its handlers returned (or its gate
// decided), after ended: a key still known was not told (the pass failed)
// or was created anew. When a Start came since, the pass's retry is gone
// with its run's queue and the new run's comparison skipped the key
// (newQueue kept it queued), so the key is queued in the run now current.
func (c *controller) toldEnd(key string, gen uint64) {
	c.known.mu.Lock()
	e, ok := c.known.keys[key]
	if !ok || !e.telling {
		c.known.mu.Unlock()
		return
	}
	e.telling = false
	handOver := gen != c.known.gen
	if handOver {
		e.queued = false
	}
	c.known.keys[key] = e
	c.known.mu.Unlock()
	if handOver {
		c.queueGone(key)
	}
}
