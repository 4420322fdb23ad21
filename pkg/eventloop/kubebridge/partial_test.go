package kubebridge_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
)

// stateRecorder keeps the state of every resync the loop hands its handlers.
type stateRecorder struct {
	mu      sync.Mutex
	resyncs []kubebridge.State
}

func (r *stateRecorder) String() string                    { return "states" }
func (r *stateRecorder) HandlesEvent(eventloop.Event) bool { return true }
func (r *stateRecorder) Revert(eventloop.Event) error      { return nil }
func (r *stateRecorder) Update(eventloop.Event, eventloop.UpdateOperations) (string, error) {
	return "", nil
}

func (r *stateRecorder) Resync(_ eventloop.Event, state any, _ int, _ eventloop.ResyncOperations) error {
	st, _ := state.(kubebridge.State)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resyncs = append(r.resyncs, st)
	return nil
}

func (r *stateRecorder) states() []kubebridge.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]kubebridge.State(nil), r.resyncs...)
}

// TestKindThatCannotSyncHoldsTheStartupResync: a watched kind that cannot be
// listed (RBAC) must not reach handlers as "no objects": the startup resync
// waits for it, the wait is reported by the kind's name, and once the kind
// can be listed the resync carries its objects.
// A metadata-only kind (cache.KindOptions.MetadataOnly) is held the same
// way: its metadata list is refused as the typed one is.
func TestKindThatCannotSyncHoldsTheStartupResync(t *testing.T) {
	t.Run("typed", func(t *testing.T) { testKindThatCannotSyncHoldsTheStartupResync(t, nil) })
	t.Run("metadata-only", func(t *testing.T) {
		testKindThatCannotSyncHoldsTheStartupResync(t, map[schema.GroupVersionKind]cache.KindOptions{
			corev1.SchemeGroupVersion.WithKind("Secret"): {MetadataOnly: ptr.To(true)}})
	})
}

func testKindThatCannotSyncHoldsTheStartupResync(t *testing.T, kinds map[schema.GroupVersionKind]cache.KindOptions) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ns := controlplanetest.Namespace(t, cp.Config())
	admin := kube(cp.Config())
	if _, err := admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The operator's identity may read ConfigMaps but not (yet) Secrets.
	user := "system:serviceaccount:" + ns + ":bridge"
	grant := func(name string, resources ...string) {
		t.Helper()
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: resources, Verbs: []string{"get", "list", "watch"}}}}
		if _, err := admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: user}}}
		if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	grant("configmaps", "configmaps")
	cfg := rest.CopyConfig(cp.Config())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}

	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	clients, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns}, Kinds: kinds, SyncTimeout: 300 * time.Millisecond, Logger: log})
	factory, err := controller.NewSharedControllerFactory(caches, &controller.SharedControllerFactoryOptions{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	bridge := kubebridge.New(factory, log)
	for _, obj := range []runtime.Object{&corev1.ConfigMap{}, &corev1.Secret{}} {
		if err := bridge.Watch(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	rec := &stateRecorder{}
	opts := eventloop.Options{Handlers: []eventloop.EventHandler{rec}, Logger: logrus.NewEntry(log)}
	bridge.Configure(&opts)
	loop, err := eventloop.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { loop.Close() })
	if err := loop.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := caches.Start(ctx); err != nil {
		t.Fatal(err)
	}
	go func() { _ = factory.Start(ctx, 1) }()
	started := make(chan error, 1)
	go func() { started <- bridge.Start(ctx, loop) }()

	// The sync timeout passes and the unsynced kind is named...
	waitFor(t, "a warning naming the Secret kind", func() bool {
		for _, e := range hook.AllEntries() {
			if e.Level <= logrus.WarnLevel && strings.Contains(e.Message+errText(e), "Secret") {
				return true
			}
		}
		return false
	})
	// ...and no resync reaches the handlers while Secrets cannot be listed
	// (before, one did at once, without the Secrets).
	time.Sleep(500 * time.Millisecond)
	if got := rec.states(); len(got) != 0 {
		t.Fatalf("handlers saw a resync while Secrets could not be listed: %v", got)
	}
	// Before, Start pushed the resync and returned right after the warning.
	select {
	case err := <-started:
		t.Fatalf("bridge.Start returned (%v) while Secrets could not be listed", err)
	default:
	}
	if err := bridge.Resync(ctx); err == nil || !strings.Contains(err.Error(), "Secret") {
		t.Fatalf("a requested resync with an unsynced kind: %v, want an error naming it", err)
	}

	grant("secrets", "secrets")
	waitFor(t, "the startup resync", func() bool { return len(rec.states()) > 0 })
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	st := rec.states()[0]
	kept, ok := st["v1/Secret"][ns+"/kept"]
	if !ok {
		t.Fatalf("the startup resync does not carry the Secret: %v", st)
	}
	if _, partial := kept.(*metav1.PartialObjectMetadata); partial != (kinds != nil) {
		t.Fatalf("the startup resync carries the Secret as %T", kept)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func errText(e *logrus.Entry) string {
	if err, ok := e.Data[logrus.ErrorKey].(error); ok {
		return err.Error()
	}
	return ""
}
