package controller

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

// CarriedDeletions hands the deletions one factory's handlers were not
// told of to the next factory of the same replica (package shard's Join
// gives one to every term). A factory records a deletion only when its own
// informer delivered it with the object's final state
// (SharedControllerFactoryOptions.KindHeldDeletion saying that state was
// this replica's), and hands it over, once its run has stopped (Wait), if
// no pass has told its handlers yet nor is telling them: a term that ends
// while that pass is queued drops it, and no other replica has the object
// to see it go. The next factory's controller of the kind queues each key
// once, and its gate, told the deletion's resourceVersion
// (CarriedDeletionAt), confirms that it was a deletion and not a move
// away (a label-selected watch reports both as a delete carrying the old
// labels) before the handlers are told. A relist's tombstone (its final
// state unknown) is never carried. The zero value is ready to use; it is
// safe for concurrent use.
type CarriedDeletions struct {
	mu   sync.Mutex
	keys map[schema.GroupVersionKind]map[string]carriedKey
}

// carriedKey is what is carried of one deletion.
type carriedKey struct {
	uid types.UID // the UID the handlers were last given
	rv  string    // the resourceVersion of the delete event
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
	if !ok || o.GetResourceVersion() == "" || !c.opts.HeldDeletion(o.GetLabels()) {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	c.known.mu.Lock()
	defer c.known.mu.Unlock()
	if e, ok := c.known.keys[key]; ok {
		e.goneRV = o.GetResourceVersion()
		c.known.keys[key] = e
	}
}

// heldUntold returns the known keys marked by recordHeldDeletion whose
// absence no pass is telling the handlers: after the run stopped, the
// deletions its handlers were never told of.
func (k *knownKeys) heldUntold() map[string]carriedKey {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]carriedKey{}
	for key, e := range k.keys {
		if e.goneRV != "" && !e.telling {
			out[key] = carriedKey{uid: e.uid, rv: e.goneRV}
		}
	}
	return out
}

// seedHeldDeletions makes the controller, before its first Start, know
// keys (deletions an earlier factory of the replica did not tell) and
// queue each, so that its first run's pass finds the object gone and asks
// the gate, which CarriedDeletionAt tells of the deletion.
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
		c.known.keys[key] = knownKey{uid: ck.uid, goneRV: ck.rv, carried: true}
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

// carriedAtKey is the context key of CarriedDeletionAt's value.
type carriedAtKey struct{}

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
