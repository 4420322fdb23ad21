package kubebridge_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) { controlplanetest.Main(m, controlplane.Options{}, &cp) }

const configMaps = "v1/ConfigMap"

// seen is what the recording handler saw, in processing order.
type seen struct {
	resync bool
	keys   []string // resync: the state's ConfigMap keys, sorted
	key    string   // change: the key
	prev   string   // change: data["v"] of PrevValue, "-" when nil
	next   string   // change: data["v"] of NewValue, "-" when nil
}

type recorder struct {
	mu     sync.Mutex
	events []seen
}

func (r *recorder) String() string                    { return "recorder" }
func (r *recorder) HandlesEvent(eventloop.Event) bool { return true }
func (r *recorder) Revert(eventloop.Event) error      { return nil }

func (r *recorder) Resync(ev eventloop.Event, state any, _ int, _ eventloop.ResyncOperations) error {
	st, _ := state.(kubebridge.State)
	var keys []string
	for k := range st[configMaps] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	r.add(seen{resync: true, keys: keys})
	return nil
}

func (r *recorder) Update(ev eventloop.Event, _ eventloop.UpdateOperations) (string, error) {
	change, ok := ev.(*kubebridge.KubeStateChange)
	if !ok || change.Resource != configMaps {
		return "", nil
	}
	r.add(seen{key: change.Key, prev: value(change.PrevValue), next: value(change.NewValue)})
	return "recorded", nil
}

func (r *recorder) add(s seen) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, s)
}

func (r *recorder) snapshot() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// waitFinal waits until the last change seen for each key carries the
// wanted value ("-" for deleted).
func (r *recorder) waitFinal(t *testing.T, final map[string]string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		events := r.snapshot()
		last := map[string]string{}
		for _, e := range events {
			if !e.resync {
				last[e.key] = e.next
			}
		}
		done := true
		for k, v := range final {
			if last[k] != v {
				done = false
			}
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("final states not reached; events: %+v", events)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func value(obj any) string {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok || cm == nil {
		return "-"
	}
	return cm.Data["v"]
}

func kube(cfg *rest.Config) *kubernetes.Clientset { return controlplanetest.Clientset(cfg) }

// startLoop wires a factory scoped to ns, a bridge watching ConfigMaps and a
// loop with the given handlers, and starts them all.
func startLoop(t *testing.T, ctx context.Context, ns string, cfg *eventloop.Config, log *logrus.Logger, handlers ...eventloop.EventHandler) *eventloop.Loop {
	return startLoopWatching(t, ctx, ns, cfg, log, [][]kubebridge.WatchOption{nil}, handlers...)
}

// startLoopWatching is startLoop with options for the ConfigMap kind: one
// watch of it per element of watches, with those options.
func startLoopWatching(t *testing.T, ctx context.Context, ns string, cfg *eventloop.Config, log *logrus.Logger, watches [][]kubebridge.WatchOption, handlers ...eventloop.EventHandler) *eventloop.Loop {
	t.Helper()
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, Logger: log})
	factory, err := controller.NewSharedControllerFactory(caches, &controller.SharedControllerFactoryOptions{
		Logger:  log,
		Backoff: controller.Backoff{Base: time.Millisecond, Max: 50 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	bridge := kubebridge.New(factory, log)
	for _, watchOpts := range watches {
		if err := bridge.Watch(ctx, &corev1.ConfigMap{}, watchOpts...); err != nil {
			t.Fatal(err)
		}
	}
	opts := eventloop.Options{Handlers: handlers, Logger: logrus.NewEntry(log), Config: cfg}
	bridge.Configure(&opts)
	loop, err := eventloop.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { loop.Close() })
	if err := loop.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := factory.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := bridge.Start(ctx, loop); err != nil {
		t.Fatal(err)
	}
	return loop
}

func TestChangesReachTheLoopInOrderAfterTheStartupResync(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	create := func(name, v string) {
		t.Helper()
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": v}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	create("pre-1", "a")
	create("pre-2", "b")
	rec := &recorder{}

	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	loop := startLoop(t, ctx, ns, nil, log, rec)

	// Changes made while the loop runs: one object updated several times,
	// one created, one deleted.
	const updates = 5
	for i := 1; i <= updates; i++ {
		cm, err := cms.Get(ctx, "pre-2", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["v"] = "b" + strconv.Itoa(i)
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("new", "c")
	if err := cms.Delete(ctx, "pre-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	rec.waitFinal(t, map[string]string{ns + "/pre-1": "-", ns + "/pre-2": "b" + strconv.Itoa(updates), ns + "/new": "c"})

	events := rec.snapshot()
	if !events[0].resync || fmt.Sprint(events[0].keys) != fmt.Sprint([]string{ns + "/pre-1", ns + "/pre-2"}) {
		t.Fatalf("first event is not the startup resync with the pre-existing objects: %+v", events[0])
	}
	// Per key, each change starts from where the previous one ended: the
	// loop's own state, not the informer's newer view.
	prev := map[string]string{ns + "/pre-1": "a", ns + "/pre-2": "b", ns + "/new": "-"}
	for _, e := range events[1:] {
		if e.resync {
			t.Fatalf("unexpected resync: %+v", e)
		}
		if e.prev != prev[e.key] {
			t.Errorf("%s: change from %q, but the loop last had %q", e.key, e.prev, prev[e.key])
		}
		prev[e.key] = e.next
	}
	// Updates to pre-2 may coalesce, but their values only move forward.
	var order []string
	for _, e := range events[1:] {
		if e.key == ns+"/pre-2" {
			order = append(order, e.next)
		}
	}
	if !slices.IsSorted(order) {
		t.Errorf("pre-2 went backwards: %v", order)
	}
	t.Logf("%d events, pre-2 values seen: %v", len(events), order)

	// A requested resync (POST /controller/resync) re-reads the caches.
	if err := loop.RequestResync(ctx); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint([]string{ns + "/new", ns + "/pre-2"})
	deadline := time.Now().Add(30 * time.Second)
	for {
		events := rec.snapshot()
		if last := events[len(events)-1]; last.resync && fmt.Sprint(last.keys) == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no resync with the current objects %s; events: %+v", want, events)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gate blocks the loop in its first change event until opened, so the
// loop's queue fills up.
type gate struct {
	recorder
	open chan struct{}
}

func (g *gate) Update(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
	<-g.open
	return g.recorder.Update(ev, txn)
}

func TestFullLoopQueueBackPressuresWithoutLoss(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := eventloop.DefaultConfig()
	cfg.QueueSize = 2
	g := &gate{open: make(chan struct{})}
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	_ = startLoop(t, ctx, ns, &cfg, log, g)

	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	const objects = 20
	final := map[string]string{}
	for i := range objects {
		name := fmt.Sprintf("cm-%02d", i)
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "x"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		final[ns+"/"+name] = "x"
	}
	// With the loop stuck and room for two events, most pushes fail; the
	// controller keeps retrying them.
	time.Sleep(500 * time.Millisecond)
	close(g.open)
	g.waitFinal(t, final)
	refused := 0
	for _, e := range hook.AllEntries() {
		if strings.Contains(e.Message, "kubebridge: push") {
			refused++
			if e.Level < logrus.DebugLevel {
				t.Errorf("back-pressure logged at %s: %s", e.Level, e.Message)
			}
		}
	}
	if refused == 0 {
		t.Fatal("no push was refused: the test did not fill the loop's queue")
	}
	t.Logf("%d pushes refused and retried", refused)
}

// TestPredicateHoldsBackUninterestingUpdates watches ConfigMaps with a
// predicate that cares only about data["v"]: label changes do not reach
// the loop, and the next data change arrives with the object the loop had
// as its previous value.
func TestPredicateHoldsBackUninterestingUpdates(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	cms := kube(cp.Config()).CoreV1().ConfigMaps(ns)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	onlyV := kubebridge.WithPredicate(func(old, new runtime.Object) bool {
		return value(old) != value(new)
	})
	_ = startLoopWatching(t, ctx, ns, nil, log, [][]kubebridge.WatchOption{{onlyV}}, rec)

	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec.waitFinal(t, map[string]string{ns + "/p": "1"})
	for i := range 3 {
		cm.Labels = map[string]string{"round": strconv.Itoa(i)}
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cm.Data["v"] = "2"
	if _, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rec.waitFinal(t, map[string]string{ns + "/p": "2"})
	var changes []seen
	for _, e := range rec.snapshot() {
		if !e.resync {
			changes = append(changes, e)
		}
	}
	want := []seen{{key: ns + "/p", prev: "-", next: "1"}, {key: ns + "/p", prev: "1", next: "2"}}
	if fmt.Sprint(changes) != fmt.Sprint(want) {
		t.Fatalf("changes %+v, want only the creation and the data change %+v", changes, want)
	}
}

func TestGenerationChanged(t *testing.T) {
	base := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: "u", Generation: 1, ResourceVersion: "1"}}
	statusOnly := base.DeepCopy()
	statusOnly.ResourceVersion = "2"
	statusOnly.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m"}}
	if kubebridge.GenerationChanged(base, statusOnly) {
		t.Error("a new resourceVersion and managed fields count as a change")
	}
	for name, edit := range map[string]func(*corev1.ConfigMap){
		"generation": func(c *corev1.ConfigMap) { c.Generation = 2 },
		"labels":     func(c *corev1.ConfigMap) { c.Labels = map[string]string{"a": "b"} },
		"finalizers": func(c *corev1.ConfigMap) { c.Finalizers = []string{"f"} },
		"deletion":   func(c *corev1.ConfigMap) { now := metav1.Now(); c.DeletionTimestamp = &now },
		"uid":        func(c *corev1.ConfigMap) { c.UID = "v" },
	} {
		changed := base.DeepCopy()
		edit(changed)
		if !kubebridge.GenerationChanged(base, changed) {
			t.Errorf("%s: not a change", name)
		}
	}
}
