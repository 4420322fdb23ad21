package dependents_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/loopcommit"
)

var cmGVKOfUser = corev1.SchemeGroupVersion.WithKind("ConfigMap")

// userHandler is a handler of the user's own loop: it keeps one ConfigMap
// of its own in the user's scheduler, and records the WebApp events the
// loop gave it.
type userHandler struct {
	ns   string
	mu   sync.Mutex
	seen []string // the keys of the WebApp changes it handled
}

func (u *userHandler) String() string                    { return "user" }
func (u *userHandler) HandlesEvent(eventloop.Event) bool { return true }
func (u *userHandler) Revert(eventloop.Event) error      { return nil }

func (u *userHandler) Resync(_ eventloop.Event, _ any, _ int, txn eventloop.ResyncOperations) error {
	txn.Put(kubedescriptor.KeyFor(cmGVKOfUser, u.ns, "users-own"), &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: u.ns, Name: "users-own"},
		Data:       map[string]string{"by": "the user's handler"}})
	return nil
}

func (u *userHandler) Update(ev eventloop.Event, _ eventloop.UpdateOperations) (string, error) {
	if c, ok := ev.(*kubebridge.KubeStateChange); ok && strings.Contains(c.Resource, "WebApp") {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.seen = append(u.seen, c.Key)
		return "seen " + c.Key, nil
	}
	return "", nil
}

func (u *userHandler) saw(key string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, k := range u.seen {
		if k == key {
			return true
		}
	}
	return false
}

// TestJoinRunsOnTheUsersLoop: a registration joined to a loop and a
// scheduler the user runs, with a handler of the user's own, keeps the
// owner's objects in order on them (one loop: the user's handler sees the
// WebApp's events; one scheduler: the registration's is the user's), the
// full resync carries both handlers' values (the user's ConfigMap is
// created and kept), and deleting the owner deletes its objects in reverse
// order and leaves the user's ConfigMap.
func TestJoinRunsOnTheUsersLoop(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	d, webapps, user, loop, sched := startUsersLoop(t, ns)
	if d.Scheduler() != sched || d.Loop() != loop {
		t.Fatal("the joined registration does not run on the user's scheduler and loop")
	}

	createApp(t, webapps, ns, "shop", "ordering")
	controlplanetest.Eventually(t, wait, "the PENDING reason in the WebApp's status", func() bool {
		return has(readyMessage(t, webapps, ns, "shop"), "Deployment shop: waiting for StatefulSet shop-db to be ready: 0/1 replicas ready")
	})
	if exists(t, "Deployment", ns, "shop") {
		t.Fatal("the Deployment exists before the database is ready")
	}
	setDBReady(t, ns, "shop-db", 1)
	dependentstest.Recorded(t, d, kvscheduler.OpCreate, "Deployment shop")
	if created := ops(d, kvscheduler.OpCreate); !before(created, "Secret shop-db", "StatefulSet shop-db") ||
		!before(created, "StatefulSet shop-db", "Deployment shop") {
		t.Fatalf("created in the order %v, want the Secret, then the StatefulSet, then the Deployment", created)
	}
	controlplanetest.Eventually(t, wait, "the user's handler sees the WebApp in the same loop", func() bool {
		return user.saw(ns + "/shop")
	})
	kube := controlplanetest.Clientset(cp.Config())
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), "users-own", metav1.GetOptions{}); err != nil {
		t.Fatalf("the user's own ConfigMap, put by the user's handler in the same resync: %v", err)
	}

	if err := webapps.Delete(t.Context(), ns, "shop", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	dependentstest.Recorded(t, d, kvscheduler.OpDelete, "Secret shop-db")
	if deleted := ops(d, kvscheduler.OpDelete); !before(deleted, "Deployment shop", "StatefulSet shop-db") ||
		!before(deleted, "StatefulSet shop-db", "Secret shop-db") {
		t.Fatalf("deleted in the order %v, want the Deployment, then the StatefulSet, then the Secret", deleted)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), "users-own", metav1.GetOptions{}); err != nil {
		t.Fatalf("the user's own ConfigMap after the owner's deletion: %v", err)
	}
	if st := sched.GetValueStatus(kubedescriptor.KeyFor(cmGVKOfUser, ns, "users-own")).State; st != kvscheduler.Configured {
		t.Fatalf("the user's value is %v in the scheduler, want Configured", st)
	}
}

// startUsersLoop starts what a user runs (a factory, a scheduler with a
// ConfigMap descriptor of the user's, a bridge, a loop with userHandler)
// and joins the registration of stack to it with the generated
// JoinWebAppDependents, until the test ends. The
// user's bridge watches the kinds filtered with GenerationChanged before
// the registration joins.
func startUsersLoop(t *testing.T, ns string, filtered ...schema.GroupVersionKind) (*dependents.Dependents,
	democtl.WebAppController, *userHandler, *eventloop.Loop, *kvscheduler.Scheduler) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	log := controlplanetest.QuietLogger()
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	sched, err := kvscheduler.New(kvscheduler.Options{Name: "user", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	caches := f.ControllerFactory().SharedCacheFactory()
	cmDesc, err := kubedescriptor.New(cmGVKOfUser, kubedescriptor.Options{Clients: caches.SharedClientFactory(),
		Cache: caches, FieldManager: "user", Context: sched.Context()})
	if err == nil {
		err = sched.RegisterDescriptor(sched.Context(), cmDesc)
	}
	if err != nil {
		t.Fatal(err)
	}
	bridge := kubebridge.New(f.ControllerFactory(), log)
	if err := bridge.WatchKind(ctx, cmGVKOfUser); err != nil {
		t.Fatal(err)
	}
	for _, gvk := range filtered {
		if err := bridge.WatchKind(ctx, gvk, kubebridge.WithPredicate(kubebridge.GenerationChanged)); err != nil {
			t.Fatal(err)
		}
	}
	user := &userHandler{ns: ns}
	lo := eventloop.Options{Handlers: []eventloop.EventHandler{user}, Committer: loopcommit.New(sched),
		Logger: log.WithField("loop", "user"), Name: "user"}
	bridge.Configure(&lo)
	// The generated form of dependents.Join (codegen's Join<Kind>Dependents).
	j, err := democtl.JoinWebAppDependents(ctx, f, webapps, "joined",
		func(app *demov1.WebApp, _ dependents.View[*demov1.WebApp]) ([]*dependents.Object, error) {
			return stack(app)
		},
		dependents.Options{FieldManager: "joined", Kinds: kinds, Logger: log},
		dependents.Host{Bridge: bridge, Scheduler: sched, Loop: &lo})
	if err != nil {
		t.Fatal(err)
	}
	loop, err := eventloop.New(lo)
	if err != nil {
		t.Fatal(err)
	}
	if err := loop.Start(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := j.Start(ctx, loop)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	go func() { _ = bridge.Start(ctx, loop) }()
	t.Cleanup(func() { stopUsersLoop(t, cancel, d, loop, sched) })
	return d, webapps, user, loop, sched
}

// stopUsersLoop stops what the test started, in the user's order: the
// context (the registration's status watch ends), the loop, the scheduler.
func stopUsersLoop(t *testing.T, cancel context.CancelFunc, d *dependents.Dependents, loop *eventloop.Loop, sched *kvscheduler.Scheduler) {
	t.Helper()
	cancel()
	waitCtx, done := context.WithTimeout(context.Background(), wait)
	defer done()
	if err := d.Wait(waitCtx); err != nil {
		t.Errorf("waiting for the registration: %v", err)
	}
	if err := loop.Stop(waitCtx); err != nil {
		t.Errorf("stopping the loop: %v", err)
	}
	if err := sched.Close(); err != nil {
		t.Errorf("closing the scheduler: %v", err)
	}
}

// TestJoinRefusesAKindTheHostAlreadyHas: a kind whose descriptor the
// user's scheduler has already (another field manager's) is refused, as
// is a Host without its parts; a registration starts once, with its loop.
func TestJoinRefusesAKindTheHostAlreadyHas(t *testing.T) {
	log := controlplanetest.QuietLogger()
	f, webapps := dependentstest.Factory(t, cp.Config(), nil)
	sched, err := kvscheduler.New(kvscheduler.Options{Name: "user", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sched.Close() })
	caches := f.ControllerFactory().SharedCacheFactory()
	cmDesc, err := kubedescriptor.New(cmGVKOfUser, kubedescriptor.Options{Clients: caches.SharedClientFactory(),
		Cache: caches, FieldManager: "user", Context: sched.Context()})
	if err == nil {
		err = sched.RegisterDescriptor(sched.Context(), cmDesc)
	}
	if err != nil {
		t.Fatal(err)
	}
	lo := eventloop.Options{Committer: loopcommit.New(sched)}
	handler := func(*demov1.WebApp, dependents.View[*demov1.WebApp]) ([]*dependents.Object, error) { return nil, nil }
	opts := dependents.Options{FieldManager: "joined", Kinds: []schema.GroupVersionKind{cmGVKOfUser}, Logger: log}
	host := dependents.Host{Bridge: kubebridge.New(f.ControllerFactory(), log), Scheduler: sched, Loop: &lo}
	if _, err := dependents.Join(t.Context(), f, webapps, dependentstest.WebAppStatus(), "joined", handler, opts, host); err == nil ||
		!strings.Contains(err.Error(), "ConfigMap") {
		t.Fatalf("joined with a kind the host's scheduler has a descriptor of: %v", err)
	}
	if len(lo.Handlers) != 0 {
		t.Fatalf("a refused registration added its handler to the loop: %v", lo.Handlers)
	}
	if _, err := dependents.Join(t.Context(), f, webapps, dependentstest.WebAppStatus(), "joined", handler, opts,
		dependents.Host{Scheduler: sched, Loop: &lo}); err == nil {
		t.Fatal("joined a Host without its bridge")
	}

	opts.Kinds = kinds
	bad := opts
	bad.Status = "not a func"
	if _, err := dependents.Join(t.Context(), f, webapps, dependentstest.WebAppStatus(), "joined", handler, bad, host); err == nil {
		t.Fatal("joined with an Options.Status of another type")
	}
	// The refused Options.Status left no descriptor behind: the same kinds
	// join now.
	j, err := dependents.Join(t.Context(), f, webapps, dependentstest.WebAppStatus(), "joined", handler, opts, host)
	if err != nil {
		t.Fatal(err)
	}
	if len(lo.Handlers) != 1 {
		t.Fatalf("the loop's handlers are %v, want the registration's", lo.Handlers)
	}
	if _, err := j.Start(t.Context(), nil); err == nil {
		t.Fatal("started without the loop")
	}
	loop, err := eventloop.New(lo)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Start(t.Context(), loop); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Start(t.Context(), loop); err == nil {
		t.Fatal("started twice")
	}
}

// TestJoinOnABridgeThatWatchesTheKindsAlready: the user's bridge already
// watches the owner kind and the StatefulSets, both filtered with
// GenerationChanged (as the WebApp operator watches WebApps); the
// registration joins it, and the StatefulSet's readiness, a status-only
// change the user's filter alone would hold back, still reaches the loop:
// the Deployment ordered after it is created.
func TestJoinOnABridgeThatWatchesTheKindsAlready(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	d, webapps, _, _, _ := startUsersLoop(t, ns, demov1.SchemeGroupVersion.WithKind("WebApp"),
		kinds[2]) // the StatefulSet
	createApp(t, webapps, ns, "shop", "ordering")
	controlplanetest.Eventually(t, wait, "the PENDING reason in the WebApp's status", func() bool {
		return has(readyMessage(t, webapps, ns, "shop"), "Deployment shop: waiting for StatefulSet shop-db to be ready: 0/1 replicas ready")
	})
	setDBReady(t, ns, "shop-db", 1)
	dependentstest.Recorded(t, d, kvscheduler.OpCreate, "Deployment shop")
}
