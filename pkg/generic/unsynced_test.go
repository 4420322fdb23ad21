package generic_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

type secrets = generic.Controller[*corev1.Secret, *corev1.SecretList]

// grantRead lets user get, list and watch resources (of the core group) in
// ns.
func grantRead(t *testing.T, ns, user, name string, resources ...string) {
	t.Helper()
	ctx := t.Context()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: resources, Verbs: []string{"get", "list", "watch"}}}}
	if _, err := kube().RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: user}}}
	if _, err := kube().RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestCacheOfAnUnsyncedKindIsNotReadAsEmpty: a handler of one kind that
// reads the cache of another kind which has not synced (here RBAC does not
// let the operator list it yet) must not be told that nothing exists. Get,
// List and GetByIndex fail with a *cache.NotSyncedError naming the kind, the
// handler's key is retried, and once the kind syncs the handler reads what
// exists. The same holds for a kind whose informer was never started.
func TestCacheOfAnUnsyncedKindIsNotReadAsEmpty(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	if _, err := kube().CoreV1().Secrets(ns).Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "child", Labels: map[string]string{"app": "a"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createCM(t, ns, "owner")
	// The operator may read ConfigMaps but not (yet) Secrets.
	user := "system:serviceaccount:" + ns + ":operator"
	grantRead(t, ns, user, "configmaps", "configmaps")
	cfg := rest.CopyConfig(cp.Config())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}

	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	f, err := generic.NewFactoryFromConfig(cfg, nil, &generic.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, SyncTimeout: 200 * time.Millisecond},
		// A short backoff ceiling, so that the retry after the grant
		// comes soon.
		Controller: controller.SharedControllerFactoryOptions{Logger: log,
			Backoff: controller.Backoff{Max: 200 * time.Millisecond}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cms := newConfigMaps(t, f)
	secretsCtl, err := generic.NewController[*corev1.Secret, *corev1.SecretList](corev1.SchemeGroupVersion.WithKind("Secret"), "secrets", true, f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	var sc *secrets = secretsCtl
	if err := sc.Cache().AddIndexer("app", func(s *corev1.Secret) ([]string, error) { return []string{s.Labels["app"]}, nil }); err != nil {
		t.Fatal(err)
	}

	// What the ConfigMap handler read from the Secret cache, pass by pass.
	type read struct {
		getErr, listErr, indexErr error
		listed, indexed           int
	}
	var mu sync.Mutex
	var reads []read
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cms.OnChange(ctx, "reads-secrets", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm == nil || cm.Name != "owner" {
			return cm, nil
		}
		var r read
		_, r.getErr = sc.Cache().Get(ns, "child")
		var listed, indexed []*corev1.Secret
		listed, r.listErr = sc.Cache().List(ns, nil)
		indexed, r.indexErr = sc.Cache().GetByIndex("app", "a")
		r.listed, r.indexed = len(listed), len(indexed)
		mu.Lock()
		reads = append(reads, r)
		mu.Unlock()
		return cm, errors.Join(r.getErr, r.listErr, r.indexErr)
	})

	go func() { _ = f.Start(ctx, 1) }()

	// The ConfigMap kind syncs and its handler runs while Secrets cannot
	// be listed.
	passes := func() []read {
		mu.Lock()
		defer mu.Unlock()
		return append([]read(nil), reads...)
	}
	controlplanetest.Eventually(t, timeout, "two passes of the ConfigMap handler", func() bool { return len(passes()) >= 2 })
	for i, r := range passes() {
		for what, err := range map[string]error{"Get": r.getErr, "List": r.listErr, "GetByIndex": r.indexErr} {
			var notSynced *cache.NotSyncedError
			if !errors.As(err, &notSynced) {
				t.Fatalf("pass %d: %s of the unsynced Secret cache returned %v (listed %d, indexed %d), want a *cache.NotSyncedError",
					i, what, err, r.listed, r.indexed)
			}
			if apierrors.IsNotFound(err) {
				t.Fatalf("pass %d: %s of the unsynced Secret cache is a NotFound: %v", i, what, err)
			}
			if notSynced.Resource.Resource != "secrets" {
				t.Fatalf("pass %d: %s: NotSyncedError names %v, want secrets", i, what, notSynced.Resource)
			}
		}
	}
	// A kind whose informer was never started (made after Start): its cache is not known
	// either.
	never, err := generic.NewController[*corev1.ServiceAccount, *corev1.ServiceAccountList](corev1.SchemeGroupVersion.WithKind("ServiceAccount"), "serviceaccounts", true, f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := never.Cache().List(ns, nil); !cache.IsNotSynced(err) {
		t.Fatalf("List of a cache whose informer was never started: %v, want a *cache.NotSyncedError", err)
	}
	if _, err := never.Cache().Get(ns, "default"); !cache.IsNotSynced(err) || apierrors.IsNotFound(err) {
		t.Fatalf("Get of a cache whose informer was never started: %v, want a *cache.NotSyncedError", err)
	}

	// Waiting for a kind to sync is routine: no handler error is logged.
	for _, e := range hook.AllEntries() {
		if e.Level <= logrus.ErrorLevel {
			t.Fatalf("logged while the Secret cache had not synced: %s: %s %v", e.Level, e.Message, e.Data)
		}
	}

	// Once Secrets can be listed, the handler's retry reads the Secret.
	grantRead(t, ns, user, "secrets", "secrets")
	controlplanetest.Eventually(t, timeout, "a pass that reads the Secret", func() bool {
		got := passes()
		last := got[len(got)-1]
		return last.getErr == nil && last.listErr == nil && last.indexErr == nil && last.listed == 1 && last.indexed == 1
	})
	if _, err := sc.Cache().Get(ns, "child"); err != nil {
		t.Fatalf("Get of the synced Secret cache: %v", err)
	}
	if _, err := sc.Cache().Get(ns, "missing"); !apierrors.IsNotFound(err) || cache.IsNotSynced(err) {
		t.Fatalf("Get of a missing Secret from the synced cache: %v, want NotFound", err)
	}
}

// TestRestartedFactorysCacheIsNotReadBeforeItListedAgain: the typed cache
// of a factory whose context ended holds the view it had then, which misses
// what was created since; read as current, a miss would say that an
// existing object does not exist. So while stopped, and after a new Start
// until the informer has listed again (here the list is held up by a
// stalled connection), reads fail with a *cache.NotSyncedError; once it has
// listed they answer with what exists.
func TestRestartedFactorysCacheIsNotReadBeforeItListedAgain(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	proxy, proxied := controlplanetest.NewProxy(t, cp.Config())
	f := newFactory(t, proxied, ns)
	cms := newConfigMaps(t, f)
	first, cancel := context.WithCancel(t.Context())
	if err := f.Start(first, 1); err != nil {
		t.Fatal(err)
	}
	createCM(t, ns, "before")
	controlplanetest.Eventually(t, timeout, "the first term's cache", func() bool {
		_, err := cms.Cache().Get(ns, "before")
		return err == nil
	})
	cancel()
	createCM(t, ns, "meanwhile")

	var notSynced *cache.NotSyncedError
	if _, err := cms.Cache().Get(ns, "meanwhile"); !errors.As(err, &notSynced) || !notSynced.Stopped {
		t.Fatalf("Get from the stopped factory's cache: %v, want a *cache.NotSyncedError with Stopped", err)
	}
	if got, err := cms.Cache().List(ns, nil); !cache.IsNotSynced(err) {
		t.Fatalf("List from the stopped factory's cache: %d objects, %v, want a *cache.NotSyncedError", len(got), err)
	}

	held := proxy.Stall()
	second, cancel2 := context.WithCancel(t.Context())
	defer cancel2()
	go func() { _ = f.Start(second, 1) }()
	<-held
	if _, err := cms.Cache().Get(ns, "meanwhile"); !errors.As(err, &notSynced) || notSynced.Stopped {
		t.Fatalf("Get while the restarted informer lists: %v, want a *cache.NotSyncedError without Stopped", err)
	}
	proxy.Resume()
	controlplanetest.Eventually(t, timeout, "the restarted cache serving what was created while stopped", func() bool {
		_, err := cms.Cache().Get(ns, "meanwhile")
		return err == nil
	})
}
