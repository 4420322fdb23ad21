package cache

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/client"
)

// DefaultSyncTimeout bounds WaitForCacheSync when its context has no
// deadline and the factory sets no SyncTimeout.
const DefaultSyncTimeout = 2 * time.Minute

// KindLabel names a kind as group/version/Kind ("apps/v1/Deployment",
// "v1/ConfigMap"), the way Lariat's log lines, errors and metrics name it,
// so that a kind found in one can be searched for in the others
// (schema.GroupVersionKind's String gives "/v1, Kind=ConfigMap").
func KindLabel(gvk schema.GroupVersionKind) string {
	return gvk.GroupVersion().String() + "/" + gvk.Kind
}

// SharedCacheFactoryOptions configure NewSharedCacheFactory. The zero value
// is a working default: all namespaces, no resync, lean informers.
type SharedCacheFactoryOptions struct {
	// Default applies to every kind; Kinds overrides it per kind, field by
	// field: each field a kind's options set replaces the default's, even
	// with an empty value (see KindOptions).
	Default Options
	Kinds   map[schema.GroupVersionKind]KindOptions
	// SyncTimeout bounds WaitForCacheSync when its context has no deadline;
	// zero means DefaultSyncTimeout.
	SyncTimeout time.Duration
	// Logger receives list and watch failures, with the kind, at most one
	// line per kind every 10 s. Nil means logrus's standard logger.
	Logger logrus.FieldLogger
	// UnhealthyAfter is how long a kind may fail to list or watch before
	// it is logged as unable to, by name; zero means
	// DefaultUnhealthyAfter. WatchHealth reports every kind's state.
	UnhealthyAfter time.Duration
}

// SharedCacheFactory keeps one informer per kind. Informers are created by
// the For* methods and run by Start. It is safe for concurrent use.
type SharedCacheFactory struct {
	clients *client.SharedClientFactory
	opts    SharedCacheFactoryOptions
	log     logrus.FieldLogger

	mu    sync.Mutex
	kinds map[schema.GroupVersionKind]*kindInformer
}

type kindInformer struct {
	informer *restartableInformer
	health   *kindHealth
	// full reads whole objects of a MetadataOnly kind (GetFull); nil for
	// the others.
	full *fullReader
	// getClient gives the kind's client, whose resource GetFull's errors
	// name.
	getClient ClientFunc
}

// NewSharedCacheFactory returns a factory whose informers list and watch
// through clients.
func NewSharedCacheFactory(clients *client.SharedClientFactory, opts *SharedCacheFactoryOptions) *SharedCacheFactory {
	f := &SharedCacheFactory{clients: clients, kinds: map[schema.GroupVersionKind]*kindInformer{}}
	if opts != nil {
		f.opts = *opts
	}
	if f.opts.SyncTimeout <= 0 {
		f.opts.SyncTimeout = DefaultSyncTimeout
	}
	if f.opts.UnhealthyAfter <= 0 {
		f.opts.UnhealthyAfter = DefaultUnhealthyAfter
	}
	f.log = f.opts.Logger
	if f.log == nil {
		f.log = logrus.StandardLogger()
	}
	return f
}

// SharedClientFactory returns the client factory informers use.
func (f *SharedCacheFactory) SharedClientFactory() *client.SharedClientFactory { return f.clients }

// ForObject returns the informer for obj's kind.
func (f *SharedCacheFactory) ForObject(obj runtime.Object) (cache.SharedIndexInformer, error) {
	gvk, err := f.clients.GVKForObject(obj)
	if err != nil {
		return nil, err
	}
	return f.ForKind(gvk)
}

// ForKind returns the informer for a kind, creating it if needed. It makes no
// request: the kind's resource is looked up when the informer lists, so a
// kind whose CRD is installed later starts working then.
func (f *SharedCacheFactory) ForKind(gvk schema.GroupVersionKind) (cache.SharedIndexInformer, error) {
	return f.forKind(gvk, func() (*client.Client, error) { return f.clients.ForKind(gvk) })
}

// ForResource returns the informer for a resource, looking up its kind.
func (f *SharedCacheFactory) ForResource(gvr schema.GroupVersionResource, namespaced bool) (cache.SharedIndexInformer, error) {
	gvk, err := f.clients.RESTMapper().KindFor(gvr)
	if err != nil {
		return nil, fmt.Errorf("informer for %s: %w", gvr, err)
	}
	return f.ForResourceKind(gvr, gvk.Kind, namespaced)
}

// ForResourceKind returns the informer for a resource whose kind and scope
// the caller knows; it never needs discovery.
func (f *SharedCacheFactory) ForResourceKind(gvr schema.GroupVersionResource, kind string, namespaced bool) (cache.SharedIndexInformer, error) {
	return f.forKind(gvr.GroupVersion().WithKind(kind), func() (*client.Client, error) {
		return f.clients.ForResourceKind(gvr, kind, namespaced)
	})
}

func (f *SharedCacheFactory) forKind(gvk schema.GroupVersionKind, getClient ClientFunc) (cache.SharedIndexInformer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k, ok := f.kinds[gvk]; ok {
		return k.informer, nil
	}
	obj, list, err := f.clients.NewObjects(gvk)
	if err != nil {
		return nil, fmt.Errorf("informer for %s: %w", KindLabel(gvk), err)
	}
	opts := f.opts.Kinds[gvk].over(f.opts.Default)
	var full *fullReader
	if opts.MetadataOnly {
		// Whole objects are stripped as a typed cache strips them; the
		// kind's Transform is written for the metadata the informer holds.
		strip := Options{KeepAllMetadata: opts.KeepAllMetadata, StripLastApplied: opts.StripLastApplied}
		full = newFullReader(obj, getClient, strip.transform(), cmp.Or(opts.FullObjects, DefaultFullObjects))
		obj, list = &metav1.PartialObjectMetadata{}, &metav1.PartialObjectMetadataList{}
		opts.Compact, opts.InternStrings, opts.StreamInitialList = false, false, false
		opts.meta = &metaLister{gvk: gvk}
	}
	health := &kindHealth{log: f.log.WithField("gvk", KindLabel(gvk)), unhealthyAfter: f.opts.UnhealthyAfter}
	opts.log = health.log
	if opts.Compact {
		if opts.codec, err = newCodec(obj, opts.HotObjects); err != nil {
			return nil, fmt.Errorf("informer for %s: %w", KindLabel(gvk), err)
		}
		if opts.wire = opts.readsWire(); opts.wire {
			getClient = wireClients(getClient, opts.codec)
		}
	}
	if opts.InternStrings && !opts.Compact && !opts.KeepAllMetadata {
		opts.interner = newInterner(maxInterned)
	}
	// A NoWatchList kind only lists: it has no stream to hand out early,
	// and must not say it streams (StreamsInitialList).
	if opts.StreamInitialList && !opts.NoWatchList {
		opts.stream = &initialStream{transform: opts.transform(), codec: opts.codec}
	}
	// Users' index functions are wrapped to see decoded objects here and
	// in AddIndexers, once each: every later run is built with the store's
	// indexers, which are wrapped already.
	indexers := safeIndexers(opts.Indexers, opts.log)
	if opts.codec != nil {
		indexers = decodingIndexers(indexers)
	}
	informer, err := newRestartableInformer(func(indexers cache.Indexers) (cache.SharedIndexInformer, error) {
		o := opts
		o.Indexers = indexers
		return newInformer(obj, list, getClient, o, health)
	}, indexers)
	if err != nil {
		return nil, fmt.Errorf("informer for %s: %w", KindLabel(gvk), err)
	}
	informer.namespace = opts.Namespace
	informer.log = opts.log
	informer.meta = opts.meta
	informer.codec = opts.codec
	if informer.stream = opts.stream; opts.stream != nil {
		opts.stream.feeding, opts.stream.deliver = informer.feeding, informer.deliverEarly
		opts.stream.begun = informer.waitHandlersBegun
		opts.stream.gone = informer.goneEarly
		opts.stream.started, opts.stream.broke = informer.streamStarted, informer.streamBroke
	}
	informer.decodeFailed = func(err error) {
		health.log.WithError(err).Error("an object of the compact cache could not be decoded")
	}
	health.relist = informer.relist
	k := &kindInformer{informer: informer, health: health, full: full, getClient: getClient}
	informer.resource = func() schema.GroupResource { return k.resource(gvk) }
	// Failures are counted and logged where the list or watch is made;
	// the reflector's report only keeps the last one for sync errors.
	err = informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		health.setLastErr(err)
	})
	if err != nil {
		return nil, fmt.Errorf("informer for %s: %w", KindLabel(gvk), err)
	}
	f.kinds[gvk] = k
	return informer, nil
}

// Start runs every informer that is not running until ctx ends: those
// created since the last Start, and those whose last Start's context has
// ended. It returns at once; use WaitForCacheSync to wait for the lists.
//
// A factory can be started again after its context ended (a replica that
// regains leadership): each informer is then rebuilt (client-go informers
// run once) with its handlers, indexers and transform, its store starting
// from what the stopped informer held, so that its first list gives handlers
// an update for every object that still exists and a delete for every object
// deleted while it was stopped. Informers handed out earlier keep working:
// they always read the running informer.
func (f *SharedCacheFactory) Start(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	kinds := maps.Clone(f.kinds)
	f.mu.Unlock()
	var errs []error
	for gvk, k := range kinds {
		if _, err := k.informer.start(ctx); err != nil {
			errs = append(errs, fmt.Errorf("start informer for %s: %w", KindLabel(gvk), err))
		}
	}
	return errors.Join(errs...)
}

// SyncError is returned by WaitForCacheSync when some kinds have not synced;
// it names each with its last list or watch error, if any.
type SyncError struct {
	// Unsynced maps each kind that did not sync to its last list/watch
	// error (nil when none was seen).
	Unsynced map[schema.GroupVersionKind]error
	// Cause is why waiting stopped: the context's error or the timeout.
	Cause error
}

// Error names every kind that did not sync, in order, with its last
// list or watch error.
func (e *SyncError) Error() string {
	gvks := make([]schema.GroupVersionKind, 0, len(e.Unsynced))
	for gvk := range e.Unsynced {
		gvks = append(gvks, gvk)
	}
	slices.SortFunc(gvks, func(a, b schema.GroupVersionKind) int { return strings.Compare(KindLabel(a), KindLabel(b)) })
	var b strings.Builder
	fmt.Fprintf(&b, "caches not synced (%v):", e.Cause)
	for _, gvk := range gvks {
		fmt.Fprintf(&b, " %s", KindLabel(gvk))
		if err := e.Unsynced[gvk]; err != nil {
			fmt.Fprintf(&b, " (last error: %v)", err)
		}
		b.WriteByte(';')
	}
	return strings.TrimSuffix(b.String(), ";")
}

// Unwrap returns the cause, so errors.Is(err, context.DeadlineExceeded) works.
func (e *SyncError) Unwrap() error { return e.Cause }

// WaitForCacheSync waits until every started informer has synced, ctx ends,
// or the factory's SyncTimeout passes (when ctx has no deadline). It reports
// each started kind's state; the error, a *SyncError, names the kinds that
// did not sync and why. Kinds that cannot sync do not stop the others from
// syncing and running.
func (f *SharedCacheFactory) WaitForCacheSync(ctx context.Context) (map[schema.GroupVersionKind]bool, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, f.opts.SyncTimeout,
			fmt.Errorf("sync timeout of %s: %w", f.opts.SyncTimeout, context.DeadlineExceeded))
		defer cancel()
	}
	f.mu.Lock()
	started := map[schema.GroupVersionKind]*kindInformer{}
	for gvk, k := range f.kinds {
		if k.informer.running() {
			started[gvk] = k
		}
	}
	f.mu.Unlock()

	synced := make(map[schema.GroupVersionKind]bool, len(started))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for gvk, k := range started {
		wg.Go(func() {
			// client-go's WaitForCacheSync logs through klog on every
			// call; polling HasSynced is all it does otherwise. The poll
			// is short because every millisecond of it delays a cold
			// start, and HasSynced is cheap.
			ok := wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) {
				return k.informer.HasSynced(), nil
			}) == nil
			mu.Lock()
			synced[gvk] = ok
			mu.Unlock()
		})
	}
	wg.Wait()

	var syncErr *SyncError
	for gvk, ok := range synced {
		if ok {
			continue
		}
		if syncErr == nil {
			syncErr = &SyncError{Unsynced: map[schema.GroupVersionKind]error{}, Cause: context.Cause(ctx)}
		}
		syncErr.Unsynced[gvk] = started[gvk].health.snapshot().LastError
	}
	if syncErr != nil {
		return synced, syncErr
	}
	return synced, nil
}

// Informers returns the informers created so far, by kind.
func (f *SharedCacheFactory) Informers() map[schema.GroupVersionKind]cache.SharedIndexInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[schema.GroupVersionKind]cache.SharedIndexInformer, len(f.kinds))
	for gvk, k := range f.kinds {
		out[gvk] = k.informer
	}
	return out
}

// WatchHealth reports, per kind, how its informer has fared with the API
// server: failures counted, the last error, and since when it has been
// failing (zero while it lists and watches).
func (f *SharedCacheFactory) WatchHealth() map[schema.GroupVersionKind]KindHealth {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[schema.GroupVersionKind]KindHealth, len(f.kinds))
	for gvk, k := range f.kinds {
		out[gvk] = k.health.snapshot()
	}
	return out
}
