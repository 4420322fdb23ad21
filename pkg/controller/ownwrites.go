package controller

import (
	"strconv"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// ownWrites remembers, per key, the newest version of its object that the
// kind's shared handlers wrote, until the cache has caught up with it. A
// pass that would start from an older cached copy is skipped: its handlers
// would act on a state they have already moved past (an OnRemove cleanup
// run again after the last finalizer went and the object is gone), and the
// watch event of that very write brings the key back with the newer copy.
//
// lasso does this for one case (objects its handlers finalized, remembered
// by UID for a minute, retried after 10 s); comparing resourceVersions
// covers every write the handlers made, with no clock involved, and an
// entry lasts only until the cache holds the written version or the object
// is gone. resourceVersions are compared as numbers, which they are on
// every kube-apiserver backed by etcd; one that is not a number is never
// tracked, so its passes are never skipped.
type ownWrites struct {
	// tracked is len(keys), read without the lock so that the common case
	// (no write the cache has not caught up with) costs one atomic load.
	tracked atomic.Int64
	mu      sync.Mutex
	keys    map[string]written
}

// written is a version of an object that the handlers left behind.
type written struct {
	uid             types.UID
	resourceVersion uint64
	// finalized is set when the handlers removed the last finalizer of an
	// object being deleted: the API server then deletes it and answers
	// with the object as it was stored, finalizers removed but with the
	// resourceVersion it had, so even a cached copy of that version is
	// stale.
	finalized bool
}

// versionOf returns obj's UID, numeric resourceVersion and whether it was
// finalized; ok is false when obj has no metadata or a resourceVersion that
// is not a number.
func versionOf(obj runtime.Object) (w written, ok bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return written{}, false
	}
	rv, err := strconv.ParseUint(m.GetResourceVersion(), 10, 64)
	if err != nil {
		return written{}, false
	}
	finalized := m.GetDeletionTimestamp() != nil && len(m.GetFinalizers()) == 0
	return written{uid: m.GetUID(), resourceVersion: rv, finalized: finalized}, true
}

// newer reports whether w makes a copy c of the same object stale: c is
// older, or it is the very version w finalized. (An object that goes on
// existing after its last finalizer went, a Pod in its grace period, gets
// a new version from that write, and its later versions are not stale.)
func (w written) newer(c written) bool {
	return c.uid == w.uid && (c.resourceVersion < w.resourceVersion ||
		c.resourceVersion == w.resourceVersion && w.finalized && !c.finalized)
}

// stale reports whether obj, the cached copy a pass of key would start
// from, is older than a version of the same object the handlers wrote. It
// forgets key when it is not: the cache has caught up, the object is gone
// (obj nil), or it is another object of that name.
func (o *ownWrites) stale(key string, obj runtime.Object) bool {
	if o.tracked.Load() == 0 {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	w, ok := o.keys[key]
	if !ok {
		return false
	}
	if obj != nil {
		if cached, ok := versionOf(obj); ok && w.newer(cached) {
			return true
		}
	}
	delete(o.keys, key)
	o.tracked.Add(-1)
	return false
}

// wrote records that a pass of key, begun from the copy from, left the
// object as to (the object the last handler passed on).
func (o *ownWrites) wrote(key string, from, to runtime.Object) {
	if from == nil || to == nil {
		return
	}
	before, ok := versionOf(from)
	if !ok {
		return
	}
	after, ok := versionOf(to)
	if !ok || !after.newer(before) {
		return // no write, or another object
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.keys == nil {
		o.keys = map[string]written{}
	}
	if w, ok := o.keys[key]; ok {
		if w.uid == after.uid && !after.newer(w) {
			return
		}
	} else {
		o.tracked.Add(1)
	}
	o.keys[key] = after
}
