package shard

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
)

// DefaultSharderSyncTimeout is how long a ring kind's view may stay
// unsynced before the sharder names it in a warning (SharderOptions.
// SyncTimeout), and how often it names it again while it stays so.
const DefaultSharderSyncTimeout = 2 * time.Minute

// One ring kind the sharder cannot list (its CRD missing, RBAC forbidding
// it) must not stop the others: an object's assignment depends only on its
// own labels and owner reference and on the member view, never on another
// kind's objects. So each kind's objects are decided on once that kind's
// view has synced (process drops its keys before, and they are all queued
// when it syncs); the member-Lease GC, which deletes a dead member's Lease
// once no object of any kind names it, waits for every view. A kind still
// unsynced is named in a warning, with its last list error, every
// SyncTimeout.

// kindErrors keeps the last list or watch error of each kind's view.
type kindErrors struct {
	mu   sync.Mutex
	last map[int]error
}

func (e *kindErrors) set(kind int, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.last == nil {
		e.last = map[int]error{}
	}
	e.last[kind] = err
}

func (e *kindErrors) get(kind int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.last[kind]
}

// watchErrors records the list and watch errors of kind i's informer; it
// must be called before the informer runs.
func (t *term) watchErrors(i int, inf cache.SharedIndexInformer) {
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		t.errs.set(i, err)
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
}

// whenSynced queues every object of kind i once its view has synced: keys
// that came before were dropped (see process).
func (t *term) whenSynced(ctx context.Context, i int) {
	inf := t.informers[i]
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return
	}
	for _, key := range inf.GetStore().ListKeys() {
		t.queue.Add(objKey{kind: i, key: key})
	}
}

// allSynced reports whether every kind's view has synced.
func (t *term) allSynced() bool {
	for _, inf := range t.informers {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// reportUnsynced names, every SyncTimeout until ctx ends, the kinds whose
// view has not synced, with their last list error.
func (t *term) reportUnsynced(ctx context.Context) {
	tk := time.NewTicker(t.s.o.SyncTimeout)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
		var names []string
		for i, inf := range t.informers {
			if inf.HasSynced() {
				continue
			}
			name := t.kinds[i].GVK.String()
			if err := t.errs.get(i); err != nil {
				name += fmt.Sprintf(" (last error: %v)", err)
			}
			names = append(names, name)
		}
		if len(names) == 0 {
			return
		}
		t.s.log.WithField("ring", t.s.ring.Name).Warnf("shard: the sharder cannot list these kinds of the ring yet; their objects are not assigned until it can, the other kinds' are: %s", strings.Join(names, "; "))
	}
}
