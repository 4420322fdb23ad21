package cache

import (
	"context"
	"sync"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
)

// restartableInformer is the informer a SharedCacheFactory hands out: a
// client-go SharedIndexInformer that can be run again after the context of
// its last run ended. client-go informers run once, so each run after the
// first builds a new one behind the same value, and re-wires into it what
// was given to the old one: live event handlers, indexers (also those added
// later), the transform and the watch error handler.
//
// The new informer's store starts as a copy of the old one's, so reads
// never see an empty cache, and its first list is reconciled against that
// copy the way client-go reconciles a re-list: handlers get an update for
// each object that still exists, a delete for each that went away while the
// informer was stopped, and an add for each that is new.
type restartableInformer struct {
	build func(indexers cache.Indexers) (cache.SharedIndexInformer, error)
	// namespace is the only namespace the informer lists (Options.Namespace);
	// empty for all.
	namespace string
	// meta is a MetadataOnly kind's (IsMetadataOnly), else nil: its stamp
	// stays first in every transform, also one set through SetTransform.
	meta *metaLister
	// log receives the panics of index functions AddIndexers adds (see
	// safeIndexers); nil means logrus's standard logger.
	log logrus.FieldLogger
	// resource names the kind in errors; looked up only for one.
	resource func() schema.GroupResource

	// runMu serializes runs; mu guards the fields below and is never held
	// while waiting, since handlers of the old informer may call back in.
	runMu sync.Mutex

	mu           sync.Mutex
	current      cache.SharedIndexInformer
	ran          bool               // current has been run
	runCtx       context.Context    // the context of current's run
	stopRun      context.CancelFunc // ends current's run alone, for relist
	done         chan struct{}      // closed when current's run returned
	handlers     map[*registration]struct{}
	transform    cache.TransformFunc // set through SetTransform, if any
	errorHandler cache.WatchErrorHandlerWithContext
	store        *storeProxy
	codec        *codec                   // a compact informer's, else nil
	decodeFailed func(error)              // reports an object a handler could not be given
	relisted     map[*relistHook]struct{} // see OnRelisted
	stream       *initialStream           // see Options.StreamInitialList, else nil
	// feedEarly is set while the current run may hand the objects of its
	// first stream to handlers early: a first run, whose store starts
	// empty. A rebuilt run's handlers already know the old objects.
	feedEarly bool
	// streamed holds, by key, what the current run's stream handed its
	// handlers early, until it has synced (see GetStreamed). It holds the
	// objects the reflector collects for the Replace anyway. streamedBy
	// is the stream it holds the objects of: the run's newest, or none (0)
	// once that one broke.
	streamed   map[string]any
	streamedBy uint64
}

var _ cache.SharedIndexInformer = (*restartableInformer)(nil)

func newRestartableInformer(build func(cache.Indexers) (cache.SharedIndexInformer, error), indexers cache.Indexers) (*restartableInformer, error) {
	informer, err := build(indexers)
	if err != nil {
		return nil, err
	}
	i := &restartableInformer{build: build, current: informer, handlers: map[*registration]struct{}{}}
	i.store = &storeProxy{i}
	return i, nil
}

func (i *restartableInformer) liveLocked() bool { return i.ran && i.runCtx.Err() == nil }

// running reports whether the informer was run and its context has not
// ended.
func (i *restartableInformer) running() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.liveLocked()
}

func (i *restartableInformer) cur() cache.SharedIndexInformer {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.current
}

// GetStore returns a store that always reads the current run's informer.
func (i *restartableInformer) GetStore() cache.Store { return i.store }

// GetIndexer returns an indexer that always reads the current run's
// informer, so views built on it keep working across restarts.
func (i *restartableInformer) GetIndexer() cache.Indexer { return i.store }

// GetController returns the current informer's (client-go's is a dummy).
func (i *restartableInformer) GetController() cache.Controller { return i.cur().GetController() }

// Run runs the informer until stopCh is closed; see RunWithContext.
func (i *restartableInformer) Run(stopCh <-chan struct{}) {
	i.RunWithContext(wait.ContextForChannel(stopCh))
}

// RunWithContext runs the informer until ctx ends, and returns then. It
// does nothing while an earlier run's context is still live.
func (i *restartableInformer) RunWithContext(ctx context.Context) {
	done, err := i.start(ctx)
	if err != nil || done == nil {
		return
	}
	<-done
}

// start runs the informer in the background until ctx ends, building a new
// client-go informer when an earlier run's context has ended. It returns
// the channel closed when the run ends, or nil when a run with a live
// context is under way.
func (i *restartableInformer) start(ctx context.Context) (<-chan struct{}, error) {
	i.runMu.Lock()
	defer i.runMu.Unlock()
	i.mu.Lock()
	if i.liveLocked() {
		i.mu.Unlock()
		return nil, nil
	}
	ran, done := i.ran, i.done
	i.mu.Unlock()
	if ran {
		// client-go stops delivering to handlers only when its run
		// returns; waiting keeps the old informer from writing to the
		// store being copied or to handlers being moved.
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if err := i.rebuild(); err != nil {
			return nil, err
		}
	}
	return i.runLocked(ctx, ran), nil
}

// runLocked runs the current informer until ctx ends or relist stops it;
// runMu must be held. A rebuilt one notifies OnRelisted once synced.
func (i *restartableInformer) runLocked(ctx context.Context, rebuilt bool) <-chan struct{} {
	runCtx, stop := context.WithCancel(ctx)
	i.mu.Lock()
	i.ran, i.runCtx, i.stopRun = true, ctx, stop
	i.feedEarly = i.stream != nil && !rebuilt
	i.streamed, i.streamedBy = nil, 0
	run := make(chan struct{})
	i.done = run
	informer := i.current
	i.mu.Unlock()
	go func() {
		defer close(run)
		defer i.forgetStreamed(informer)
		defer stop()
		informer.RunWithContext(runCtx)
	}()
	if rebuilt {
		go i.notifyRelisted(runCtx, informer)
	}
	if i.stream != nil {
		// A rebuilt run flushes too: when the first run stopped (or
		// relisted) before its sync, its handlers were told of objects
		// this run's list may lack.
		go i.flushEarly(runCtx, informer)
	}
	return run
}

// relist stops the running informer and runs a rebuilt one, which lists at
// once. It is for a watch that the API server no longer serves (too old a
// resource version): client-go would list again too, but only after its
// reflector backoff, which grows to tens of seconds when the server
// restarts repeatedly. Handlers see what they would on client-go's re-list:
// updates, deletes for objects gone, adds for new ones.
func (i *restartableInformer) relist() error {
	i.runMu.Lock()
	defer i.runMu.Unlock()
	i.mu.Lock()
	if !i.liveLocked() {
		i.mu.Unlock()
		return nil
	}
	ctx, stop, done := i.runCtx, i.stopRun, i.done
	i.mu.Unlock()
	stop()
	select {
	case <-done:
	case <-ctx.Done():
		return nil
	}
	if err := i.rebuild(); err != nil {
		// Not running any more: the next Start tries again.
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		i.mu.Lock()
		i.runCtx = ended
		i.mu.Unlock()
		return err
	}
	i.runLocked(ctx, true)
	return nil
}

// rebuild replaces the stopped informer with a new one seeded with its
// objects, with every handler, indexer, transform and error handler moved.
func (i *restartableInformer) rebuild() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	old := i.current.GetIndexer()
	next, err := i.build(old.GetIndexers())
	if err != nil {
		return err
	}
	if i.transform != nil {
		if err := next.SetTransform(i.transform); err != nil {
			return err
		}
	}
	if i.errorHandler != nil {
		if err := next.SetWatchErrorHandlerWithContext(i.errorHandler); err != nil {
			return err
		}
	}
	if err := next.GetIndexer().Replace(old.List(), old.LastStoreSyncResourceVersion()); err != nil {
		return err
	}
	for r := range i.handlers {
		inner, err := next.AddEventHandlerWithOptions(r.handler, r.options)
		if err != nil {
			return err
		}
		r.in, r.inner = next, inner
	}
	i.current = next
	return nil
}

// HasSynced reports whether the informer is running and has listed; an
// informer whose run ended is not synced, since nothing keeps it current.
func (i *restartableInformer) HasSynced() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.liveLocked() && i.current.HasSynced()
}

// HasSyncedChecker is the current run's checker; after a restart, ask
// again.
func (i *restartableInformer) HasSyncedChecker() cache.DoneChecker {
	return i.cur().HasSyncedChecker()
}

// LastSyncResourceVersion is the current run's.
func (i *restartableInformer) LastSyncResourceVersion() string {
	return i.cur().LastSyncResourceVersion()
}

// SetWatchErrorHandler sets the watch error handler of this and every
// later run; like client-go's, it fails once the informer has run.
func (i *restartableInformer) SetWatchErrorHandler(handler cache.WatchErrorHandler) error {
	return i.SetWatchErrorHandlerWithContext(func(_ context.Context, r *cache.Reflector, err error) { handler(r, err) })
}

// SetWatchErrorHandlerWithContext is SetWatchErrorHandler with a context.
func (i *restartableInformer) SetWatchErrorHandlerWithContext(handler cache.WatchErrorHandlerWithContext) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if err := i.current.SetWatchErrorHandlerWithContext(handler); err != nil {
		return err
	}
	i.errorHandler = handler
	return nil
}

// SetTransform replaces the transform of this and every later run; like
// client-go's, it fails once the informer has run. What the cache itself
// needs stays around it: a MetadataOnly kind's stamp before it, a compact
// cache's encoding after it.
func (i *restartableInformer) SetTransform(handler cache.TransformFunc) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	full := i.codec.compacting(i.meta.stamping(handler))
	if i.stream != nil {
		full = i.stream.informerTransform(full)
	}
	if err := i.current.SetTransform(full); err != nil {
		return err
	}
	if i.codec != nil {
		// Not running yet: its objects come decoded, for the transform.
		i.codec.wireOff.Store(true)
	}
	if i.stream != nil {
		// Not running yet (SetTransform fails once it ran): the stream
		// does not read it concurrently.
		i.stream.transform = handler
	}
	i.transform = full
	return nil
}

// IsStopped reports whether the current run has stopped. Unlike client-go's
// informers, a stopped one runs again on the next Start of its factory, and
// handlers can still be added: they are kept for that run.
func (i *restartableInformer) IsStopped() bool { return i.cur().IsStopped() }

// logger returns i.log, or logrus's standard logger when it is nil.
func (i *restartableInformer) logger() logrus.FieldLogger {
	if i.log != nil {
		return i.log
	}
	return logrus.StandardLogger()
}

// AddIndexers adds indexers to this and every later run's store.
func (i *restartableInformer) AddIndexers(indexers cache.Indexers) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	indexers = safeIndexers(indexers, i.logger())
	if i.codec != nil {
		indexers = decodingIndexers(indexers)
	}
	if i.current.IsStopped() {
		// client-go refuses once stopped; the store itself does not, and
		// the next run copies its indexers.
		return i.current.GetIndexer().AddIndexers(indexers)
	}
	return i.current.AddIndexers(indexers)
}
