package controller

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

// CarriedDeletions hands the keys one factory held, and whose end its
// handlers were not told of, to the next factory of the same replica
// (package shard's Join gives one to every term): a term that ends while
// a deletion's pass is queued, or being told (a pass that outlives the
// stop grace and then fails with the term's context), or before its
// informer saw the deletion at all (a partition that cuts the term off
// and ends it), would drop it, and no other replica has the object to see
// it go. Once its run stopped (Wait), a factory hands over every known
// key of the kinds of SharedControllerFactoryOptions.KindHeldDeletion:
// each with the UID the handlers were given, the resourceVersion at which
// its cache last had the object, and the resourceVersion of the delete
// event its informer delivered, if any, with a final state HeldDeletion
// said was this replica's. A key whose delete event showed a final state
// not this replica's (a move away) is not carried.
//
// The next factory's controller of the kind queues each key once. A key
// its own list has is handled as any object. For an absent one its gate
// judges (CarriedDeletionAt, CarriedHeldSince): the object's state at the
// delete event's resourceVersion tells a deletion from a move away (a
// label-selected watch reports both as a delete carrying the old labels);
// with no delete event seen, the object's history after the
// resourceVersion its cache last had tells whether it went while still
// the earlier factory's. Only then are the handlers told it is gone. The
// zero value is ready to use; it is safe for concurrent use.
type CarriedDeletions struct {
	mu   sync.Mutex
	keys map[schema.GroupVersionKind]map[string]carriedKey
}

// carriedKey is what is carried of one held key.
type carriedKey struct {
	uid    types.UID // the UID the handlers were last given
	rv     string    // the resourceVersion of the delete event, if seen
	lastRV string    // the resourceVersion the cache last had
	// held is the handing factory's HeldDeletion (or the one that handed
	// it the key), which judges labels in the object's history.
	held func(labels map[string]string) bool
}

// put replaces what is carried for gvk with keys.
func (d *CarriedDeletions) put(gvk schema.GroupVersionKind, keys map[string]carriedKey) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(keys) == 0 {
		delete(d.keys, gvk)
		return
	}
	if d.keys == nil {
		d.keys = map[schema.GroupVersionKind]map[string]carriedKey{}
	}
	d.keys[gvk] = keys
}

// take returns what is carried for gvk and forgets it: one factory tells.
func (d *CarriedDeletions) take(gvk schema.GroupVersionKind) map[string]carriedKey {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	keys := d.keys[gvk]
	delete(d.keys, gvk)
	return keys
}

// recordHeldDeletion marks, from the event handler's delete, a known key
// whose object's final state the controller's HeldDeletion says was this
// replica's, with the event's resourceVersion. A tombstone
// (DeletedFinalStateUnknown) carries no final state to judge.
func (c *controller) recordHeldDeletion(obj any) {
	if c.opts.HeldDeletion == nil {
		return
	}
	if _, tomb := obj.(cache.DeletedFinalStateUnknown); tomb {
		return
	}
	o, ok := obj.(interface {
		GetLabels() map[string]string
		GetResourceVersion() string
	})
	if !ok || o.GetResourceVersion() == "" {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	held := c.heldDeletion(key, o.GetLabels())
	c.known.mu.Lock()
	defer c.known.mu.Unlock()
	e, ok := c.known.keys[key]
	switch {
	case !ok:
		return
	case held:
		e.goneRV = o.GetResourceVersion()
	default:
		// It went away from this replica (moved): its end, deletion
		// or not, is not this replica's, and nothing is carried.
		e.lastRV = ""
	}
	c.known.keys[key] = e
}

// heldDeletion asks the controller's HeldDeletion about key's final
// labels. It is called by the informer's goroutine, where a panic would
// end the process: its panic is logged with the key and the stack, and
// counts as held, the safe side (the deletion is carried to the next
// term, whose Gate decides, rather than dropped as another replica's).
func (c *controller) heldDeletion(key string, labels map[string]string) (held bool) {
	returned := false
	defer func() {
		if !returned {
			// No recover stops a Goexit, and client-go does not start its
			// listener again: this line is all that tells it.
			c.log.WithField("key", key).Errorf("HeldDeletion ended the informer's goroutine (runtime.Goexit): the controller is told of no later event of the kind")
		}
	}()
	if err := recovered("HeldDeletion", func() error { held = c.opts.HeldDeletion(labels); return nil }); err != nil {
		c.log.WithField("key", key).Errorf("counted as held: %v", err)
		held = true
	}
	returned = true
	return held
}

// heldKeys returns, once the run stopped, what to carry of the known
// keys: every key whose end the handlers were not told of (a pass that
// is telling it may still fail with the ended term's context), with a
// delete event or a resourceVersion the cache had to judge it by. held is
// the controller's HeldDeletion; a key an earlier factory handed over
// keeps that factory's, whose labels its history shows.
func (k *knownKeys) heldKeys(held func(labels map[string]string) bool) map[string]carriedKey {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]carriedKey{}
	for key, e := range k.keys {
		if e.goneRV == "" && e.lastRV == "" {
			continue
		}
		// The handlers' UID only, not the cache's (heldUID): a key whose
		// object no pass gave them, its name taken again elsewhere, is
		// not told to the next term (TestAdv9NeverHandledKeyRecreatedElsewhereIsNotTold).
		ck := carriedKey{uid: e.uid, rv: e.goneRV, lastRV: e.lastRV, held: held}
		if e.carried && e.held != nil {
			ck.held = e.held
		}
		out[key] = ck
	}
	return out
}

// seedHeldDeletions makes the controller, before its first Start, know
// keys an earlier factory of the replica held and did not tell the end
// of, and queue each: a pass over one its list has handles the object, a
// pass over an absent one asks the gate, told of what was carried
// (CarriedDeletionAt, CarriedHeldSince), whether it went.
func (c *controller) seedHeldDeletions(keys map[string]carriedKey) {
	c.startLock.Lock()
	defer c.startLock.Unlock()
	c.known.mu.Lock()
	defer c.known.mu.Unlock()
	if c.known.keys == nil {
		c.known.keys = map[string]knownKey{}
	}
	for key, ck := range keys {
		if _, ok := c.known.keys[key]; ok {
			continue
		}
		c.known.keys[key] = knownKey{uid: ck.uid, goneRV: ck.rv, lastRV: ck.lastRV, held: ck.held, carried: true}
		c.startKeys = append(c.startKeys, startKey{key: key, priority: workqueue.High})
	}
}

// carriedAt returns the resourceVersion of key's carried deletion, empty
// for a key an earlier factory did not hand over.
func (k *knownKeys) carriedAt(key string) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e := k.keys[key]; e.carried {
		return e.goneRV
	}
	return ""
}

// carriedSince returns, for a key an earlier factory handed over with no
// delete event seen, the resourceVersion that factory's cache last had
// and its HeldDeletion; empty for any other key.
func (k *knownKeys) carriedSince(key string) (string, func(labels map[string]string) bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e := k.keys[key]; e.carried && e.goneRV == "" && e.held != nil {
		return e.lastRV, e.held
	}
	return "", nil
}

// carriedAtKey is the context key of CarriedDeletionAt's value.
type carriedAtKey struct{}

// carriedSinceKey is the context key of CarriedHeldSince's value.
type carriedSinceKey struct{}

// carriedSinceValue is CarriedHeldSince's value.
type carriedSinceValue struct {
	rv   string
	held func(labels map[string]string) bool
}

// CarriedDeletionAt returns, in a Gate's Admit for a pass over an absent
// object (obj nil), the resourceVersion of the delete event an earlier
// factory of the replica saw for the key and handed over
// (CarriedDeletions), empty for any other pass. The event came from a
// watch that selected the object, but such a watch reports an object
// that stops matching (moved to another replica) as a delete with its old
// labels too: the gate tells the two apart (the object does not exist at
// that resourceVersion only if it was deleted) before it lets the
// handlers be told.
func CarriedDeletionAt(ctx context.Context) string {
	rv, _ := ctx.Value(carriedAtKey{}).(string)
	return rv
}

// CarriedHeldSince returns, in a Gate's Admit for a pass over an absent
// object (obj nil), what an earlier factory of the replica handed over of
// a key whose deletion its informer never delivered: the resourceVersion
// at which its cache last had the object, and its HeldDeletion, which
// tells from labels whether the object was still that factory's. It
// returns "" and nil for any other pass. The gate judges from the
// object's history after rv: gone while held (its delete event, or the
// first event of another UID, shows labels held says were that
// factory's), it is this replica's to tell; moved away first, it is not.
func CarriedHeldSince(ctx context.Context) (rv string, held func(labels map[string]string) bool) {
	v, _ := ctx.Value(carriedSinceKey{}).(carriedSinceValue)
	return v.rv, v.held
}
