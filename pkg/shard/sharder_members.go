package shard

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/cache"
)

// confirmTimeout bounds a read of a member's lease that confirms its death.
const confirmTimeout = 10 * time.Second

// view is what the sharder knows about the ring's members at one moment. It
// is never changed once published.
type view struct {
	// valid is false while the lease view is not synced or its last list
	// or watch failed: the sharder then changes nothing.
	valid bool
	// live are the IDs of the live members, sorted; liveSet holds the
	// same.
	live    []string
	liveSet map[string]bool
	// dead are the members whose lease a read from the API server showed
	// expired, released or gone: only their objects are moved directly.
	dead map[string]bool
}

func (v *view) same(o *view) bool {
	return o != nil && v.valid == o.valid && slices.Equal(v.live, o.live) && maps.Equal(v.dead, o.dead)
}

// members keeps the view of the ring's member Leases. How a member is
// judged live (assigned objects) or dead (its objects moved directly) is
// in sharder_liveness.go.
type members struct {
	ring   string
	prefix string
	leases kubernetes.Interface
	ns     string
	inf    cache.SharedIndexInformer
	retry  time.Duration
	skew   time.Duration // SharderOptions.ClockSkew
	onView func()        // called after a new view is published
	log    logrus.FieldLogger
	// ender updates member Leases (fenced by the sharder's election), to
	// end the term of a member whose Lease expired (sharder_end.go).
	ender coordinationv1client.LeasesGetter

	cur    atomic.Pointer[view]
	signal chan struct{}

	mu      sync.Mutex
	healthy bool
	// pending is the resourceVersion of the first event of the current
	// watch: the view is healthy again once the informer's store holds
	// it, and with it everything listed before it.
	pending string
	// watches counts the watches tracked, so that the end of one that was
	// replaced already changes nothing.
	watches uint64
	seen    map[string]seenRenewal // by lease name
	// gone holds Leases deleted while held, by lease name: their
	// members are judged as if they were no longer renewed
	// (sharder_gone.go).
	gone map[string]*coordinationv1.Lease
	// named holds the Leases (by name) this sharder saw a copy of naming
	// their member, or released: it judges those from the copy. unseen
	// holds when it first found one of the others missing or not naming
	// its member, by name: a sharder elected after a Lease was deleted or
	// edited by hand keeps that member's objects until maxLease after it
	// (sharder_gone.go).
	named    map[string]bool
	unseen   map[string]time.Time
	maxLease time.Duration // Ring.MaxMemberLeaseDuration
	dead     map[string]bool
	// deadAt holds when this sharder first found each dead member's term
	// over: its Lease is deleted only a retention later (sharder_gc.go).
	deadAt  map[string]time.Time
	confirm map[string]bool // member IDs to read the lease of
	// confirmed are the members a read of their Lease showed live since
	// they last were not: only they are assigned objects.
	confirmed map[string]bool
	// recheck holds members a read found not live but possibly still
	// writing, with when to read their Lease again.
	recheck map[string]time.Time
	// refuted holds, for members whose Lease the informer shows live and
	// a read did not, the resourceVersion of the informer's copy: it is
	// not read again until that copy changes.
	refuted map[string]string
}

func newMembers(ring Ring, leases kubernetes.Interface, retry, skew time.Duration, log logrus.FieldLogger, onView func()) *members {
	m := &members{ring: ring.Name, prefix: MemberLeaseName(ring.Name, ""), leases: leases, ns: ring.Namespace,
		retry: retry, skew: skew, onView: onView, log: log, signal: make(chan struct{}, 1),
		seen: map[string]seenRenewal{}, gone: map[string]*coordinationv1.Lease{}, dead: map[string]bool{}, deadAt: map[string]time.Time{}, confirm: map[string]bool{},
		named: map[string]bool{}, unseen: map[string]time.Time{}, maxLease: ring.maxMemberLease(),
		confirmed: map[string]bool{}, recheck: map[string]time.Time{}, refuted: map[string]string{}}
	sel := labels.SelectorFromSet(labels.Set{RingLabel: ring.Name}).String()
	client := leases.CoordinationV1().Leases(ring.Namespace)
	// The list and watch report whether they work, so that a view that
	// stopped following the API server is not acted on. A list, or a
	// watch that starts with one, is a relist: what the informer's store
	// holds is about to be replaced, so the view knows nothing until the
	// whole list is in the store. A watch counts as working once its
	// first event (after the list it starts with, if any) has reached
	// the store, which then holds all that came before: client-go's rest
	// client answers a watch whose connection broke (an EOF) with an
	// empty watch and no error, so success of the call proves nothing,
	// and a list or a watch list is handed to the store only after the
	// call returned, or after its first events were delivered.
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = sel
			m.setHealthy(false)
			return client.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			w, err := client.Watch(ctx, o)
			if err != nil {
				m.setHealthy(false)
				return nil, err
			}
			return m.track(w, o.SendInitialEvents != nil && *o.SendInitialEvents), nil
		},
	}
	m.inf = cache.NewSharedIndexInformer(lw, &coordinationv1.Lease{}, 0, cache.Indexers{})
	_ = m.inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		log.Warnf("shard: member lease view of ring %s failed, changing nothing until it recovers: %v", ring.Name, err)
		m.setHealthy(false)
	})
	_, _ = m.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    m.leaseBack,
		UpdateFunc: func(_, cur any) { m.leaseBack(cur) },
		DeleteFunc: m.leaseDeleted,
	})
	return m
}

// arrived is told of every lease the informer's store took in: the
// first event of a watch makes the view healthy once it is there.
func (m *members) arrived(o any) {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	if a, err := meta.Accessor(o); err == nil {
		m.mu.Lock()
		healed := m.pending != "" && a.GetResourceVersion() == m.pending
		if healed {
			m.pending = ""
		}
		m.mu.Unlock()
		if healed {
			m.setHealthy(true)
		}
	}
	m.poke()
}

// startWatch returns the number of a new watch, the current one from now
// on.
func (m *members) startWatch() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.watches++
	m.pending = ""
	return m.watches
}

// expect records rv, the first event of watch n, as the event whose
// arrival in the store makes the view healthy, unless n was replaced.
func (m *members) expect(n uint64, rv string) {
	m.mu.Lock()
	if m.watches == n {
		m.pending = rv
	}
	m.mu.Unlock()
}

// endWatch reports the view unhealthy when watch n ended, unless it was
// replaced already.
func (m *members) endWatch(n uint64) {
	m.mu.Lock()
	current := m.watches == n
	if current {
		m.pending = ""
	}
	m.mu.Unlock()
	if current {
		m.setHealthy(false)
	}
}

func (m *members) setHealthy(ok bool) {
	m.mu.Lock()
	changed := m.healthy != ok
	m.healthy = ok
	m.mu.Unlock()
	if changed {
		m.poke()
	}
}

// poke asks the loop to compute the view again.
func (m *members) poke() {
	select {
	case m.signal <- struct{}{}:
	default:
	}
}

// view returns the current view (nil before the first).
func (m *members) view() *view { return m.cur.Load() }

// askConfirm asks the loop to read the lease of member id, which holds
// objects but is not live in the view.
func (m *members) askConfirm(id string) {
	m.mu.Lock()
	m.confirm[id] = true
	m.mu.Unlock()
	m.poke()
}

// loop computes the view whenever the leases change, the view's health
// changes, a confirmation is asked for, or a live member's lease is due
// to expire, until ctx ends.
func (m *members) loop(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := m.compute(ctx)
		timer.Stop()
		if !next.IsZero() {
			// A little after the expiry, so that it has passed.
			timer.Reset(time.Until(next) + 10*time.Millisecond)
		}
		select {
		case <-ctx.Done():
			return
		case <-m.signal:
		case <-timer.C:
		}
	}
}

// track returns w, reporting the view unhealthy when w ends or delivers
// an error, and expecting its first event: once the informer's store holds
// that event, the view is healthy (see arrived). With initial, w is a
// watch list: the events up to the bookmark that ends the initial ones are
// the list, which the reflector gathers apart and hands to the store only
// at that bookmark, so the first event to expect is the one after it. A
// watch that ends normally (its timeout) thus pauses the sharder until the
// next one delivers; member leases renew every few seconds, so that is
// short.
func (m *members) track(w watch.Interface, initial bool) watch.Interface {
	h := &trackedWatch{inner: w, out: make(chan watch.Event), stop: make(chan struct{})}
	n := m.startWatch()
	go func() {
		defer close(h.out)
		first := true
		for ev := range w.ResultChan() {
			switch {
			case ev.Type == watch.Error:
				m.setHealthy(false)
			case ev.Type == watch.Bookmark:
				if a, err := meta.Accessor(ev.Object); err == nil && a.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
					initial = false
				}
			case initial:
			case first:
				first = false
				if a, err := meta.Accessor(ev.Object); err == nil {
					m.expect(n, a.GetResourceVersion())
				}
			}
			select {
			case h.out <- ev:
			case <-h.stop:
				m.endWatch(n)
				return
			}
		}
		m.endWatch(n)
	}()
	return h
}

type trackedWatch struct {
	inner watch.Interface
	out   chan watch.Event
	stop  chan struct{}
	once  sync.Once
}

// Stop implements watch.Interface.
func (h *trackedWatch) Stop() {
	h.once.Do(func() { close(h.stop) })
	h.inner.Stop()
}

// ResultChan implements watch.Interface.
func (h *trackedWatch) ResultChan() <-chan watch.Event { return h.out }
