// Package kubebridge feeds an event loop from Lariat's informer layer: each
// registered kind's changes become KubeStateChange events, and a KubeResync
// with a snapshot of every registered kind starts the loop (and answers
// resync requests). The loop itself knows nothing of informers; this package
// is the only place the two meet.
package kubebridge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// HandlerName is the name of the handler the bridge registers on each kind's
// shared controller.
const HandlerName = "eventloop-bridge"

// Bridge connects kinds of a SharedControllerFactory to one event loop.
//
// Use it in this order: New, Watch each kind, Configure the loop's options,
// create and start the loop, start the factory, then Start the bridge, which
// pushes the startup resync once the caches have synced.
type Bridge struct {
	factory *controller.SharedControllerFactory
	log     logrus.FieldLogger

	mu       sync.Mutex
	loop     *eventloop.Loop
	kinds    map[string]*kind
	snapshot bool                      // the startup resync has been pushed
	sent     map[string]runtime.Object // resource+key -> object the loop was last sent

	// Positions order what the bridge hands the loop (see order.go).
	pos     uint64        // of the last cache read handed to the loop; under mu
	applied atomic.Uint64 // of the snapshot the loop's state was last replaced with
}

// kind is one watched kind.
type kind struct {
	informer toolscache.SharedIndexInformer
	changed  Predicate // nil: every new resourceVersion is a change
}

// Predicate tells whether an object changed, from the version the loop was
// last sent (old) to the cached one (new), in a way the loop's handlers
// care about. Both are non-nil; creations and deletions always reach the
// loop.
type Predicate func(old, new runtime.Object) bool

// WatchOption configures a watched kind.
type WatchOption func(*kind)

// WithPredicate sends a kind's updates to the loop only when changed says
// so. Updates it holds back are not lost: the next update is compared with
// what the loop has, and resyncs carry the current objects. The loop's
// state keeps the older object meanwhile, so handlers must not read the
// fields the predicate ignores from change events.
func WithPredicate(changed Predicate) WatchOption {
	return func(k *kind) { k.changed = changed }
}

// GenerationChanged is a Predicate for kinds with a status subresource: it
// ignores updates that change only the status (and the server-maintained
// metadata), letting through changes of the generation (the spec), labels,
// annotations, finalizers, owners and the deletion timestamp.
func GenerationChanged(old, new runtime.Object) bool {
	o, err1 := meta.Accessor(old)
	n, err2 := meta.Accessor(new)
	if err1 != nil || err2 != nil {
		return true
	}
	return o.GetUID() != n.GetUID() || o.GetGeneration() != n.GetGeneration() ||
		!equality.Semantic.DeepEqual(o.GetLabels(), n.GetLabels()) ||
		!equality.Semantic.DeepEqual(o.GetAnnotations(), n.GetAnnotations()) ||
		!equality.Semantic.DeepEqual(o.GetFinalizers(), n.GetFinalizers()) ||
		!equality.Semantic.DeepEqual(o.GetOwnerReferences(), n.GetOwnerReferences()) ||
		!equality.Semantic.DeepEqual(o.GetDeletionTimestamp(), n.GetDeletionTimestamp())
}

// New returns a bridge over factory's kinds. A nil logger means logrus's
// standard logger.
func New(factory *controller.SharedControllerFactory, log logrus.FieldLogger) *Bridge {
	if log == nil {
		log = logrus.StandardLogger()
	}
	return &Bridge{
		factory: factory,
		log:     log,
		kinds:   map[string]*kind{},
		sent:    map[string]runtime.Object{},
	}
}

// ResourceName names a kind in KubeStateChange.Resource and State:
// "group/version/Kind", or "version/Kind" for the core group.
func ResourceName(gvk schema.GroupVersionKind) string { return controller.KindLabel(gvk) }

// Watch registers the kind of obj (a typed object, or an unstructured one
// with apiVersion and kind set) until ctx ends, as WatchKind does.
func (b *Bridge) Watch(ctx context.Context, obj runtime.Object, opts ...WatchOption) error {
	c, err := b.factory.ForObject(obj)
	if err != nil {
		return fmt.Errorf("kubebridge: %w", err)
	}
	return b.watch(ctx, c, opts)
}

// WatchKind registers a kind until ctx ends. A kind watched already is
// watched once, until the first watch's ctx ends, and sends the loop the
// updates either watch's predicate lets through (see WithPredicate).
// A kind whose cache is metadata-only (cache.KindOptions.MetadataOnly)
// reaches the loop as *metav1.PartialObjectMetadata stamped with the kind;
// whole objects are read with the cache factory's GetFull.
func (b *Bridge) WatchKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...WatchOption) error {
	c, err := b.factory.ForKind(gvk)
	if err != nil {
		return fmt.Errorf("kubebridge: %w", err)
	}
	return b.watch(ctx, c, opts)
}

func (b *Bridge) watch(ctx context.Context, c controller.SharedController, opts []WatchOption) error {
	resource := ResourceName(c.GroupVersionKind())
	k := &kind{informer: c.Informer()}
	for _, o := range opts {
		if o != nil {
			o(k)
		}
	}
	b.mu.Lock()
	if watched, ok := b.kinds[resource]; ok {
		// Another part of the operator watches the kind already (a
		// dependents registration joining the user's loop): both get the
		// changes either asked for.
		watched.changed = eitherChanged(watched.changed, k.changed)
		b.mu.Unlock()
		return nil
	}
	b.kinds[resource] = k
	b.mu.Unlock()
	c.RegisterHandler(ctx, HandlerName, controller.SharedHandlerFunc(func(key string, _ runtime.Object) (runtime.Object, error) {
		return nil, b.onChange(resource, key)
	}))
	return nil
}

// Configure sets the loop options the bridge depends on: only a KubeResync
// may be the startup resync, POST /controller/resync and healing resyncs
// re-read the caches, and a startup resync that is late because kinds have
// not synced makes the loop report them instead of aborting.
func (b *Bridge) Configure(opts *eventloop.Options) {
	opts.StartupWaitingFor = b.Unsynced
	opts.IsStartupResync = func(ev eventloop.Event) bool {
		_, ok := ev.(*KubeResync)
		return ok
	}
	opts.OnResyncRequest = b.Resync
	opts.RefreshState = b.refreshState
}

// unsyncedReportInterval is how often Start repeats which kinds it still
// waits for.
const unsyncedReportInterval = 30 * time.Second

// unsyncedPollInterval is how often Start checks, once the factory's sync
// timeout has passed, whether the late kinds have synced: as often as
// client-go's WaitForCacheSync, since a kind that cannot be listed (RBAC, a
// CRD not installed) can keep Start waiting for the operator's lifetime.
const unsyncedPollInterval = 100 * time.Millisecond

// Start waits until the caches of the watched kinds have synced, then
// pushes the startup resync to loop. A kind that has not synced is never
// handed to the loop as empty (its handlers would read "no objects" and
// the scheduler would delete what was derived from them): Start keeps
// waiting for it, names it in a warning once the factory's sync timeout has
// passed and again every 30 s, and returns when the resync is pushed, ctx
// ends, or the loop stops. The rest of the operator (controllers of other
// kinds, HTTP endpoints) runs meanwhile; the loop reports the wait as its
// startup resync deadline.
//
// The informers must have been started: by the factory's Start, or by its
// cache factory's Start while the controller factory's Start (which waits
// for the same sync) runs alongside, so that a kind that cannot sync costs
// one sync timeout rather than two.
func (b *Bridge) Start(ctx context.Context, loop *eventloop.Loop) error {
	b.mu.Lock()
	b.loop = loop
	b.mu.Unlock()
	if _, err := b.factory.SharedCacheFactory().WaitForCacheSync(ctx); err != nil {
		var syncErr *cache.SyncError
		if !errors.As(err, &syncErr) || ctx.Err() != nil {
			return fmt.Errorf("kubebridge: %w", err)
		}
	}
	ticker := time.NewTicker(unsyncedPollInterval)
	defer ticker.Stop()
	var reported time.Time
	for {
		unsynced := b.Unsynced()
		if len(unsynced) == 0 {
			return b.Resync(ctx)
		}
		if time.Since(reported) >= unsyncedReportInterval {
			reported = time.Now()
			b.log.WithField("kinds", strings.Join(unsynced, ", ")).Warn(
				"kubebridge: holding the startup resync until these kinds have synced (" + strings.Join(unsynced, ", ") +
					"): a kind that is not listed yet must not look empty")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubebridge: kinds not synced (%s): %w", strings.Join(unsynced, ", "), ctx.Err())
		case <-loop.Exited():
			return fmt.Errorf("kubebridge: the loop stopped while kinds were not synced (%s)", strings.Join(unsynced, ", "))
		case <-ticker.C:
		}
	}
}

// Unsynced names the watched kinds (as ResourceName does) whose caches have
// not synced, sorted; the bridge hands the loop no state until it is empty.
func (b *Bridge) Unsynced() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.unsyncedLocked()
}

func (b *Bridge) unsyncedLocked() []string {
	var out []string
	for resource, k := range b.kinds {
		if !k.informer.HasSynced() {
			out = append(out, resource)
		}
	}
	slices.Sort(out)
	return out
}

// Resync pushes a KubeResync with a snapshot of every watched kind. The
// first call is the loop's startup resync. It fails, pushing nothing, while
// a watched kind has not synced, and does not wait for room in the loop's
// queue: a full queue is an error.
func (b *Bridge) Resync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.loop == nil {
		return errors.New("kubebridge: Resync before Start")
	}
	state, sent, err := b.snapshotLocked()
	if err != nil {
		return err
	}
	if err := b.loop.PushEvent(&KubeResync{State: state, from: b, pos: b.pos}); err != nil {
		return fmt.Errorf("kubebridge: push resync: %w", err)
	}
	// Events pushed earlier are processed before the resync, later ones
	// after it, so the snapshot's objects are what the loop will know;
	// unless a resync that re-reads the caches overtakes it, and then that
	// newer snapshot is (order.go).
	b.sent = sent
	b.snapshot = true
	return nil
}

// refreshState gives healing and requested resyncs a fresh snapshot. It runs
// on the loop goroutine, when the loop gets to the resync, so the snapshot
// is newer than the changes still queued: they are superseded (see
// order.go), and the snapshot is what the loop was last sent.
func (b *Bridge) refreshState() (any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	state, sent, err := b.snapshotLocked()
	if err != nil {
		return nil, err
	}
	b.applied.Store(b.pos)
	b.sent = sent
	return state, nil
}

// snapshotLocked copies every watched kind's cache, at the next position.
// It fails while a kind has not synced: a partial list would look like
// deletions.
func (b *Bridge) snapshotLocked() (State, map[string]runtime.Object, error) {
	if unsynced := b.unsyncedLocked(); len(unsynced) > 0 {
		return nil, nil, fmt.Errorf("kubebridge: no snapshot while kinds have not synced: %s", strings.Join(unsynced, ", "))
	}
	b.pos++
	state := State{}
	sent := map[string]runtime.Object{}
	for resource, k := range b.kinds {
		objs := map[string]runtime.Object{}
		for _, item := range k.informer.GetStore().List() {
			obj, ok := item.(runtime.Object)
			if !ok {
				continue
			}
			key, err := toolscache.MetaNamespaceKeyFunc(obj)
			if err != nil {
				continue
			}
			objs[key] = obj
			sent[sentKey(resource, key)] = obj
		}
		state[resource] = objs
	}
	return state, sent, nil
}

// onChange pushes the current cached state of one key. It reads the cache
// under the bridge's lock rather than using the object the controller
// passed, so an event never carries an object older than the last snapshot.
// An error (the loop's queue is full) makes the controller retry the key
// with backoff: the change is delayed, never dropped. A closed loop is not
// an error: the change has nowhere to go.
func (b *Bridge) onChange(resource, key string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.snapshot {
		return nil // the startup snapshot, taken later from the same cache, includes it
	}
	k := b.kinds[resource]
	item, exists, err := k.informer.GetStore().GetByKey(key)
	if err != nil {
		return err
	}
	sk := sentKey(resource, key)
	last, known := b.sent[sk]
	ev := &KubeStateChange{Resource: resource, Key: key, from: b}
	if exists {
		obj, ok := item.(runtime.Object)
		if !ok {
			return fmt.Errorf("kubebridge: %s %s: cached %T is not a runtime.Object", resource, key, item)
		}
		if known && resourceVersion(last) == resourceVersion(obj) {
			return nil // a resync or a re-enqueue: nothing new for the loop
		}
		if known && k.changed != nil && !k.changed(last, obj) {
			return nil // nothing the loop cares about; compared again next time
		}
		ev.NewValue = obj
	} else if !known {
		return nil // created and deleted before the loop heard of it
	}
	b.pos++
	ev.pos = b.pos
	if err := b.loop.PushEvent(ev); err != nil {
		err = fmt.Errorf("kubebridge: push %s %s: %w", resource, key, err)
		switch {
		case errors.Is(err, eventloop.ErrQueueFull):
			return controller.RetryQuietly(err) // back-pressure, not a failure
		case errors.Is(err, eventloop.ErrClosed):
			// The loop was stopped (Stop, Close, or the end of its
			// context) while the controllers still run: nothing will
			// take the change, and a retry could not change that.
			b.log.WithError(err).Debug("kubebridge: change dropped: the loop is closed")
			return nil
		}
		return err
	}
	if exists {
		b.sent[sk] = ev.NewValue
	} else {
		delete(b.sent, sk)
	}
	return nil
}

func sentKey(resource, key string) string { return resource + "\x00" + key }

func resourceVersion(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}
