package shard_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// Short durations, so tests take seconds; the margin between the renew
// deadline and the lease duration (1 s) is what the fence test rests on.
const (
	leaseDuration = 2 * time.Second
	renewDeadline = 1 * time.Second
	retryPeriod   = 250 * time.Millisecond
	timeout       = 30 * time.Second
)

const ringName = "ring"

var configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")

// handledBy is the annotation a member's marking handler writes.
const handledBy = "test.lariat.dev/handled-by"

func testRing(ns string) shard.Ring {
	return shard.Ring{Name: ringName, Namespace: ns, Kinds: []shard.Kind{{GVK: configMapGVK}}}
}

// call is one handler call of a member.
type call struct {
	key     string
	id      string // the ID of the member's term
	deleted bool
	at      time.Time
}

// gatePass is one pass of a member's gate.
type gatePass struct {
	key    string
	cached bool // the gate was given a cached object
	handle bool
	err    error
}

// member is one replica of the tests: it joins the ring (shard.Join) with
// lease and data connections through proxies of their own that a test can
// cut, and for each term builds a factory set up by the term's
// FactoryOptions, with a ConfigMap handler that records its calls (and,
// with mark, writes an annotation on each ConfigMap), and its gate
// wrapped to record every pass and to hold passes on request. The
// records span the replica's terms.
type member struct {
	name      string
	cur       atomic.Pointer[memberTerm]
	leaseProx *controlplanetest.Proxy
	dataProx  *controlplanetest.Proxy
	writes    controlplanetest.WriteLog // data writes issued past the fence
	renews    controlplanetest.WriteLog // lease writes (not deletes) the API server accepted, by time sent
	terms     atomic.Int32
	running   atomic.Bool
	slowDone  atomic.Int32         // writes of slow handler calls attempted
	metrics   *prometheus.Registry // the gate metrics of the member's terms

	mu         sync.Mutex
	calls      []call
	passes     []gatePass
	tombstones map[string]int
	hold       map[string]chan struct{} // passes of a key wait for the channel to close
	held       map[string]chan struct{} // closed when a pass of a key is held
	absentOnly map[string]bool          // hold only the passes of key given no cached object

	cancel context.CancelFunc
	done   chan error
}

// memberTerm is what a member builds for one term.
type memberTerm struct {
	m        *shard.Member
	f        *generic.Factory
	informer toolscache.SharedIndexInformer
	cms      *generic.Controller[*corev1.ConfigMap, *corev1.ConfigMapList]
}

type memberOpts struct {
	// mark makes the handler write handledBy on every ConfigMap it sees;
	// for those named slow*, only after the member stopped running and a
	// lease duration more passed (a handler still busy when its context
	// ended, writing with a context of its own).
	mark bool
	// beforeStart, if set, is called with the first term's ID before its
	// factory starts (to create objects its informer lists).
	beforeStart func(id string)
	// workers is the number of the factory's workers; zero means 2.
	workers int
	// stream makes the factory's informers stream their first list
	// (cache.Options.StreamInitialList).
	stream bool
	// stopGrace is the factory's controller StopGrace; zero means the
	// default.
	stopGrace time.Duration
}

func startMember(t *testing.T, ns, name string, o memberOpts) *member {
	t.Helper()
	r := &member{name: name, done: make(chan error, 1), tombstones: map[string]int{},
		hold: map[string]chan struct{}{}, held: map[string]chan struct{}{}, absentOnly: map[string]bool{}, metrics: prometheus.NewRegistry()}
	leaseProx, leaseCfg := controlplanetest.NewProxy(t, cp().Config())
	dataProx, dataCfg := controlplanetest.NewProxy(t, cp().Config())
	r.leaseProx, r.dataProx = leaseProx, dataProx
	leaseCfg = r.renews.Wrap(leaseCfg, true)
	leaseCfg.Timeout = renewDeadline
	dataCfg = r.writes.Wrap(dataCfg, false)
	ctx, cancel := context.WithCancel(t.Context())
	r.cancel = cancel
	go func() {
		r.done <- shard.Join(ctx, kubernetes.NewForConfigOrDie(leaseCfg).CoordinationV1(), testRing(ns), func(ctx context.Context, m *shard.Member) error {
			if err := m.Register(r.metrics); err != nil {
				return err
			}
			term, err := r.build(ctx, t, ns, m, dataCfg, o)
			if err != nil {
				return err
			}
			if o.beforeStart != nil && r.terms.Load() == 0 {
				o.beforeStart(m.ID())
			}
			r.cur.Store(term)
			r.terms.Add(1)
			r.running.Store(true)
			// running is false from the term's end on, while f.Run still
			// waits for the handlers (the slow ones wait for that).
			stop := context.AfterFunc(ctx, func() { r.running.Store(false) })
			defer stop()
			defer r.running.Store(false)
			workers := o.workers
			if workers == 0 {
				workers = 2
			}
			return term.f.Run(ctx, workers)
		}, leader.WithIdentity(name), leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
			leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger()))
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-r.done; err != nil {
			t.Errorf("member %s: %v", name, err)
		}
	})
	eventually(t, name+" running and synced", func() bool { return r.running.Load() && r.t().informer.HasSynced() })
	return r
}

// build builds the factory of one term of the member.
func (r *member) build(ctx context.Context, t *testing.T, ns string, m *shard.Member, dataCfg *rest.Config, o memberOpts) (*memberTerm, error) {
	term := &memberTerm{m: m}
	opts := m.FactoryOptions(dataCfg, &generic.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns, StreamInitialList: o.stream}, SyncTimeout: time.Minute},
		Controller: controller.SharedControllerFactoryOptions{Logger: controlplanetest.QuietLogger(), Backoff: controller.Backoff{Base: 10 * time.Millisecond, Max: 200 * time.Millisecond},
			StopGrace: o.stopGrace},
	})
	inner := opts.Controller.KindGates[configMapGVK]
	if inner == nil {
		return nil, errors.New("FactoryOptions set no gate for the ring's kind")
	}
	opts.Controller.KindGates[configMapGVK] = controller.GateFunc(func(ctx context.Context, key string, obj runtime.Object) (bool, error) {
		r.mu.Lock()
		hold, held := r.hold[key], r.held[key]
		if r.absentOnly[key] && obj != nil {
			hold = nil
		}
		if hold != nil {
			// A gate pass may run again for a held key (a quiet retry):
			// the first pass told the test; later ones wait the same.
			select {
			case <-held:
			default:
				close(held)
			}
		}
		r.mu.Unlock()
		if hold != nil {
			<-hold
		}
		handle, err := inner.Admit(ctx, key, obj)
		r.mu.Lock()
		r.passes = append(r.passes, gatePass{key: key, cached: obj != nil, handle: handle, err: err})
		r.mu.Unlock()
		return handle, err
	})
	// The fence is outermost: the recorder sees only what went out.
	f, err := generic.NewFactoryFromConfig(m.Fence(dataCfg), nil, opts)
	if err != nil {
		return nil, err
	}
	term.f = f
	cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](configMapGVK, "configmaps", true, f.ControllerFactory())
	if err != nil {
		return nil, err
	}
	term.informer = cms.Informer()
	term.cms = cms
	_, err = term.informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			r.mu.Lock()
			r.tombstones[tomb.Key]++
			r.mu.Unlock()
		}
	}})
	if err != nil {
		return nil, err
	}
	id := m.ID()
	cms.OnChange(ctx, "record", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		r.mu.Lock()
		r.calls = append(r.calls, call{key: key, id: id, deleted: cm == nil, at: time.Now()})
		r.mu.Unlock()
		if !o.mark || cm == nil || cm.Annotations[handledBy] != "" {
			return cm, nil
		}
		if strings.HasPrefix(cm.Name, "slow") {
			for r.running.Load() {
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(leaseDuration)
			defer r.slowDone.Add(1)
		}
		cm = cm.DeepCopy()
		if cm.Annotations == nil {
			cm.Annotations = map[string]string{}
		}
		cm.Annotations[handledBy] = r.name
		return cms.Update(t.Context(), cm)
	})
	return term, nil
}

// t returns what the member built for its current (or last) term.
func (r *member) t() *memberTerm { return r.cur.Load() }

// id returns the ID of the member's current (or last) term.
func (r *member) id() string { return r.t().m.ID() }

// callsFor returns the member's handler calls for key.
func (r *member) callsFor(key string) []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []call
	for _, c := range r.calls {
		if c.key == key {
			out = append(out, c)
		}
	}
	return out
}

// passesFor returns the member's gate passes for key.
func (r *member) passesFor(key string) []gatePass {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []gatePass
	for _, p := range r.passes {
		if p.key == key {
			out = append(out, p)
		}
	}
	return out
}

// sawDeleted reports whether a handler of the member was given key as
// deleted.
func (r *member) sawDeleted(key string) bool {
	for _, c := range r.callsFor(key) {
		if c.deleted {
			return true
		}
	}
	return false
}

// holdPasses makes the gate passes of key wait until the returned function
// is called; the channel closes once a pass waits.
func (r *member) holdPasses(key string) (held <-chan struct{}, release func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	hold, h := make(chan struct{}), make(chan struct{})
	r.hold[key], r.held[key] = hold, h
	var once sync.Once
	return h, func() {
		once.Do(func() {
			r.mu.Lock()
			delete(r.hold, key)
			delete(r.held, key)
			delete(r.absentOnly, key)
			r.mu.Unlock()
			close(hold)
		})
	}
}

// holdAbsentPasses is holdPasses for the passes of key that are given no
// cached object (the object left the member's cache) alone.
func (r *member) holdAbsentPasses(key string) (held <-chan struct{}, release func()) {
	held, release = r.holdPasses(key)
	r.mu.Lock()
	r.absentOnly[key] = true
	r.mu.Unlock()
	return held, release
}

func (r *member) cached(key string) bool {
	_, ok, _ := r.t().informer.GetStore().GetByKey(key)
	return ok
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	controlplanetest.Eventually(t, timeout, what, cond)
}

func cms(ns string) interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.ConfigMap, error)
} {
	return controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns)
}

// createCM creates a ConfigMap assigned to the member with ID assigned
// ("" for none).
func createCM(t *testing.T, ns, name, assigned string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if assigned != "" {
		cm.Labels = map[string]string{shard.AssignmentLabel(ringName): assigned}
	}
	if _, err := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// label writes the ring's labels on a ConfigMap as the sharder would:
// assigned ("" removes the assignment) and the drain label when drain.
// It returns the ConfigMap written.
func label(t *testing.T, ns, name, assigned string, drain bool) *corev1.ConfigMap {
	t.Helper()
	labels := map[string]any{shard.AssignmentLabel(ringName): nil, shard.DrainLabel(ringName): nil}
	if assigned != "" {
		labels[shard.AssignmentLabel(ringName)] = assigned
	}
	if drain {
		labels[shard.DrainLabel(ringName)] = "true"
	}
	md := map[string]any{"labels": labels}
	if assigned != "" {
		md["annotations"] = map[string]any{shard.TrailAnnotation(ringName): assigned}
	}
	patch, err := json.Marshal(map[string]any{"metadata": md})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns).Patch(t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

// cp is the control plane of the package's TestMain (in package shard).
func cp() *controlplane.ControlPlane { return shard.ControlPlaneForTests() }
