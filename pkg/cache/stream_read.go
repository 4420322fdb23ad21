package cache

import (
	"k8s.io/client-go/tools/cache"
)

// StreamReader is an informer that can answer for the objects of its first
// list before that list is all in (Options.StreamInitialList): the
// informers of a SharedCacheFactory are StreamReaders. It is what lets a
// controller's workers start while the list streams in, rather than at
// the sync.
type StreamReader interface {
	// StreamsInitialList reports whether the informer hands (or, not
	// started yet, will hand) the objects of its first list to handlers
	// as they arrive, and has not synced since. It is false once that
	// run's context ended: the next run lists again without streaming.
	StreamsInitialList() bool
	// GetStreamed returns the object of key. Once the informer has synced
	// (synced is true) it reads the store, and a miss means the object
	// does not exist. Before that it returns the object the stream handed
	// the handlers, if it did; a miss then (exists and synced false) says
	// nothing of whether the object exists: it may not have been listed
	// yet, so it must never be read as a deletion. An informer whose run's
	// context ended answers nothing from its stream (a miss, not synced):
	// nothing keeps what it streamed current. For the same reason a
	// stream that broke answers nothing from then on: the stream that
	// lists again answers what it has handed out itself.
	GetStreamed(key string) (obj any, exists, synced bool, err error)
}

var _ StreamReader = (*restartableInformer)(nil)

// StreamsInitialList is StreamReader's.
func (i *restartableInformer) StreamsInitialList() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.stream == nil {
		return false
	}
	if !i.ran {
		return true
	}
	// A stopped run streams no more, and the next one is rebuilt, which
	// does not stream early.
	return i.feedEarly && i.liveLocked() && !i.current.HasSynced()
}

// GetStreamed is StreamReader's.
func (i *restartableInformer) GetStreamed(key string) (obj any, exists, synced bool, err error) {
	i.mu.Lock()
	live := i.liveLocked()
	synced = live && i.current.HasSynced()
	if live {
		// Once the run's context ended, what it streamed may have been
		// deleted since: nothing watches it any more.
		obj, exists = i.streamed[key]
	}
	i.mu.Unlock()
	if synced {
		obj, exists, err = i.store.GetByKey(key)
		return obj, exists, true, err
	}
	if !exists {
		return nil, false, false, nil
	}
	// A compact cache's stream hands out the compact form.
	obj, err = decoded(obj)
	return obj, err == nil, false, err
}

// recordStreamedLocked keeps obj, handed to the handlers early, for
// GetStreamed until the informer has synced; i.mu must be held.
func (i *restartableInformer) recordStreamedLocked(obj any) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	if i.streamed == nil {
		i.streamed = map[string]any{}
	}
	i.streamed[key] = obj
}

// forgetStreamed drops what informer's run streamed once that run ended:
// GetStreamed no longer answers with it, and it need not stay in memory
// while the factory is stopped.
func (i *restartableInformer) forgetStreamed(informer cache.SharedIndexInformer) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.current == informer {
		i.streamed = nil
	}
}
