package controller

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	lariatcache "github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller/workqueue"
)

// keysOnly marks the controller's event handler as reading only keys and
// resourceVersions (lariatcache.KeyOnlyHandler): a compact cache need not
// decode objects for it, since the worker reads the object when it handles
// the key.
type keysOnly struct {
	cache.ResourceEventHandlerDetailedFuncs
}

func (keysOnly) ReadsOnlyKeys() {}

var _ lariatcache.KeyOnlyHandler = keysOnly{}

// eventHandler turns informer events into keys: adds of the initial list
// and periodic resyncs at low priority, real changes at high priority.
func (c *controller) eventHandler() cache.ResourceEventHandler {
	return keysOnly{cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if isInInitialList {
				c.enqueueObject(obj, workqueue.Low, true)
			} else {
				c.enqueueObject(obj, workqueue.High, true)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			if resourceVersion(oldObj) != resourceVersion(newObj) {
				c.enqueueObject(newObj, workqueue.High, true)
			} else if !c.opts.SyncOnlyChangedObjects {
				c.enqueueObject(newObj, workqueue.Low, true) // a periodic resync
			}
		},
		DeleteFunc: func(obj any) {
			c.recordHeldDeletion(obj)
			c.enqueueObject(obj, workqueue.High, false)
		},
	}}
}

func resourceVersion(obj any) string {
	if o, ok := obj.(interface{ GetResourceVersion() string }); ok {
		return o.GetResourceVersion()
	}
	return ""
}

// enqueueObject queues an object's key, known from now on when the cache
// has the object (see knownKeys); DeletionHandlingMetaNamespaceKeyFunc unwraps
// DeletedFinalStateUnknown tombstones, so a deletion missed during a watch
// gap still reaches the handler (as nil).
func (c *controller) enqueueObject(obj any, p workqueue.Priority, cached bool) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		c.log.WithError(err).Errorf("cannot compute the key of a %T", obj)
		return
	}
	if !cached {
		c.queueGone(key) // unless the handlers were told (see knownKeys.gone)
		return
	}
	var uid types.UID
	if o, ok := obj.(interface{ GetUID() types.UID }); ok {
		uid = o.GetUID()
	}
	c.known.addCached(key, uid, resourceVersion(obj))
	c.add(startKey{key: key, priority: p})
}

func (c *controller) Enqueue(namespace, name string) {
	c.EnqueueKey(joinKey(namespace, name))
}

func (c *controller) EnqueueAfter(namespace, name string, delay time.Duration) {
	c.add(startKey{key: joinKey(namespace, name), after: delay, priority: workqueue.High})
}

func (c *controller) EnqueueKey(key string) {
	c.add(startKey{key: key, priority: workqueue.High})
}

func joinKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func (c *controller) add(k startKey) {
	c.startLock.Lock()
	q := c.queue
	if q != nil && c.runCtx.Err() != nil {
		q = nil // stopping: a shut-down queue would drop the key
	}
	if q == nil {
		c.startKeys = append(c.startKeys, k)
	}
	c.startLock.Unlock()
	if q != nil {
		addTo(q, k)
	}
}

func addTo(q *workqueue.Queue[string], k startKey) {
	if k.after > 0 {
		q.AddAfter(k.key, k.after)
	} else {
		q.AddWithPriority(k.key, k.priority)
	}
}
