package lasso_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rancher/wrangler/v3/pkg/generic"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	lasso "github.com/lariat-dev/lariat/compat/lasso"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
)

var configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")

// seen records what a handler was given, per key.
type seen struct {
	mu    sync.Mutex
	calls map[string][]*corev1.ConfigMap // nil entries: the object was gone
	times map[string][]time.Time
}

func newSeen() *seen {
	return &seen{calls: map[string][]*corev1.ConfigMap{}, times: map[string][]time.Time{}}
}

func (s *seen) record(key string, cm *corev1.ConfigMap) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[key] = append(s.calls[key], cm)
	s.times[key] = append(s.times[key], time.Now())
}

func (s *seen) get(key string) []*corev1.ConfigMap {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*corev1.ConfigMap(nil), s.calls[key]...)
}

func (s *seen) at(key string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.times[key]...)
}

func (s *seen) last(key string) (*corev1.ConfigMap, int) {
	calls := s.get(key)
	if len(calls) == 0 {
		return nil, 0
	}
	return calls[len(calls)-1], len(calls)
}

// TestOnChangeCreateUpdateDelete: a handler registered with wrangler's
// generated ConfigMap controller sees a ConfigMap created, updated and
// deleted, and runs on Lariat's informer for the kind.
func TestOnChangeCreateUpdateDelete(t *testing.T) {
	e := newEnv(t, nil, 0)
	cms := e.core.Core().V1().ConfigMap()
	s := newSeen()
	cms.OnChange(t.Context(), "record", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		s.record(key, cm)
		return cm, nil
	})
	e.start(t)

	// The informer wrangler reads is the one Lariat's cache factory made.
	lariatInformer := e.adapter.Lariat().SharedCacheFactory().Informers()[configMapGVK]
	if lariatInformer == nil || cms.Informer() != lariatInformer {
		t.Fatalf("wrangler's ConfigMap informer is %T, not Lariat's (%T)", cms.Informer(), lariatInformer)
	}

	key := e.ns + "/cm"
	created, err := e.kube.CoreV1().ConfigMaps(e.ns).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"v": "1"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the handler sees the created ConfigMap", func() bool {
		cm, _ := s.last(key)
		return cm != nil && cm.Data["v"] == "1"
	})
	created.Data["v"] = "2"
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Update(t.Context(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the handler sees the update", func() bool {
		cm, _ := s.last(key)
		return cm != nil && cm.Data["v"] == "2"
	})
	if err := e.kube.CoreV1().ConfigMaps(e.ns).Delete(t.Context(), "cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the handler sees the deletion (a nil object)", func() bool {
		cm, n := s.last(key)
		return n > 0 && cm == nil
	})
}

// TestOnRemoveFinalizer: wrangler's OnRemove adds its finalizer, and the
// object is deleted only after the handler has run.
func TestOnRemoveFinalizer(t *testing.T) {
	e := newEnv(t, nil, 0)
	cms := e.core.Core().V1().ConfigMap()
	release := make(chan struct{})
	var ran sync.WaitGroup
	ran.Add(1)
	var once sync.Once
	cms.OnRemove(t.Context(), "cleanup", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		<-release
		once.Do(ran.Done)
		return cm, nil
	})
	e.start(t)

	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const finalizer = "wrangler.cattle.io/cleanup"
	eventually(t, "the finalizer is added", func() bool {
		cm, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(t.Context(), "cm", metav1.GetOptions{})
		return err == nil && len(cm.Finalizers) == 1 && cm.Finalizers[0] == finalizer
	})
	if err := e.kube.CoreV1().ConfigMaps(e.ns).Delete(t.Context(), "cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The handler is blocked: the object must still exist, deleting.
	eventually(t, "the cache sees the deletion timestamp", func() bool {
		cm, err := cms.Cache().Get(e.ns, "cm")
		return err == nil && cm.DeletionTimestamp != nil
	})
	cm, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(t.Context(), "cm", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the object is gone before its OnRemove handler ran: %v", err)
	}
	if len(cm.Finalizers) != 1 {
		t.Fatalf("finalizers before the handler ran: %v", cm.Finalizers)
	}
	close(release)
	ran.Wait()
	eventually(t, "the object is deleted after the handler ran", func() bool {
		_, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(t.Context(), "cm", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

// TestEnqueueAndEnqueueAfter: wrangler's Enqueue runs the handlers again at
// once, EnqueueAfter after the delay.
func TestEnqueueAndEnqueueAfter(t *testing.T) {
	e := newEnv(t, nil, 0)
	cms := e.core.Core().V1().ConfigMap()
	s := newSeen()
	cms.OnChange(t.Context(), "record", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm != nil {
			s.record(key, cm)
		}
		return cm, nil
	})
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.start(t)
	key := e.ns + "/cm"
	eventually(t, "the initial list reaches the handler", func() bool { return len(s.get(key)) == 1 })

	cms.Enqueue(e.ns, "cm")
	eventually(t, "Enqueue runs the handler again", func() bool { return len(s.get(key)) == 2 })

	const delay = 500 * time.Millisecond
	enqueued := time.Now()
	cms.EnqueueAfter(e.ns, "cm", delay)
	eventually(t, "EnqueueAfter runs the handler again", func() bool { return len(s.get(key)) == 3 })
	if got := s.at(key)[2].Sub(enqueued); got < delay {
		t.Fatalf("EnqueueAfter(%s) ran the handler after %s", delay, got)
	}
}

// TestCacheAndClient: wrangler's generated Deployment client writes and
// reads through lasso's client over Lariat's REST client (protobuf), and
// its cache reads Lariat's informer.
func TestCacheAndClient(t *testing.T) {
	e := newEnv(t, nil, 0)
	deployments := e.apps.Apps().V1().Deployment()
	deployments.OnChange(t.Context(), "noop", func(_ string, d *appsv1.Deployment) (*appsv1.Deployment, error) { return d, nil })
	e.start(t)

	sc, err := e.adapter.ForKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	if err != nil {
		t.Fatal(err)
	}
	lariatClient, err := sc.(*lasso.SharedController).SharedController.Client()
	if err != nil {
		t.Fatal(err)
	}
	lassoREST, ok := sc.Client().RESTClient.(*rest.RESTClient)
	if !ok || lassoREST.Client != lariatClient.RESTClient().(*rest.RESTClient).Client {
		t.Fatal("lasso's client does not send through Lariat's HTTP client")
	}

	labelsOf := map[string]string{"app": "web"}
	created, err := deployments.Create(&appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: e.ns, Labels: labelsOf},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labelsOf},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labelsOf},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.Kind != "Deployment" {
		t.Fatalf("Create returned %+v", created.TypeMeta)
	}
	got, err := deployments.Get(e.ns, "web", metav1.GetOptions{})
	if err != nil || got.UID != created.UID {
		t.Fatalf("Get: %v, %v", got, err)
	}
	got.Annotations = map[string]string{"updated": "yes"}
	if _, err := deployments.Update(got); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the cache holds the update", func() bool {
		d, err := deployments.Cache().Get(e.ns, "web")
		return err == nil && d.Annotations["updated"] == "yes"
	})
	list, err := deployments.Cache().List(e.ns, labels.SelectorFromSet(labelsOf))
	if err != nil || len(list) != 1 || list[0].UID != created.UID {
		t.Fatalf("cache List: %v, %v", list, err)
	}
	if _, err := deployments.Cache().Get(e.ns, "missing"); !apierrors.IsNotFound(err) {
		t.Fatalf("cache Get of a missing object: %v, want NotFound", err)
	}
	all, err := deployments.List(e.ns, metav1.ListOptions{})
	if err != nil || len(all.Items) != 1 {
		t.Fatalf("List: %v, %v", all, err)
	}
	if err := deployments.Delete(e.ns, "web", nil); err != nil {
		t.Fatal(err)
	}
}

// TestHandlerErrorRetriedWithLariatBackoff: a failing wrangler handler is
// retried with the Lariat factory's backoff (its base, doubling), not
// lasso's.
func TestHandlerErrorRetriedWithLariatBackoff(t *testing.T) {
	const base = 100 * time.Millisecond
	e := newEnv(t, &controller.SharedControllerFactoryOptions{
		KindBackoff: map[schema.GroupVersionKind]controller.Backoff{configMapGVK: {Base: base, Max: time.Minute}},
	}, 0)
	cms := e.core.Core().V1().ConfigMap()
	s := newSeen()
	const failures = 3
	cms.OnChange(t.Context(), "flaky", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm == nil {
			return nil, nil
		}
		s.record(key, cm)
		if len(s.get(key)) <= failures {
			return cm, errors.New("not yet")
		}
		return cm, nil
	})
	e.start(t)
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	key := e.ns + "/cm"
	eventually(t, "the handler succeeds after its failures", func() bool { return len(s.get(key)) == failures+1 })
	times := s.at(key)
	for i := 1; i < len(times); i++ {
		// Exponential from base with 10% jitter: base, 2 base, 4 base.
		want := time.Duration(float64(base<<(i-1)) * 0.9)
		if gap := times[i].Sub(times[i-1]); gap < want {
			t.Errorf("retry %d came %s after the failure, want at least %s (Lariat's backoff)", i, gap, want)
		}
	}
}

// TestSyncErrorNamesMissingKind: a wrangler controller for a kind whose CRD
// is not installed makes Start fail with Lariat's sync error naming the
// kind, after the factory's SyncTimeout rather than never; wrangler's own
// Start names it too. (The other kinds' controllers wait for it, as on
// lasso: see TestWranglerHandlerNeverReadsAnUnsyncedCache.)
func TestSyncErrorNamesMissingKind(t *testing.T) {
	e := newEnv(t, nil, 3*time.Second)
	missing := schema.GroupVersionKind{Group: "missing.lariat.dev", Version: "v1", Kind: "Widget"}
	widgets := generic.NewController[*unstructured.Unstructured, *unstructured.UnstructuredList](missing, "widgets", true, e.adapter)
	widgets.OnChange(t.Context(), "widgets", func(_ string, u *unstructured.Unstructured) (*unstructured.Unstructured, error) { return u, nil })
	e.core.Core().V1().ConfigMap().OnChange(t.Context(), "record", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		return cm, nil
	})

	err := e.adapter.Start(t.Context(), 2)
	var syncErr *cache.SyncError
	if !errors.As(err, &syncErr) {
		t.Fatalf("Start: %v, want a *cache.SyncError", err)
	}
	if _, ok := syncErr.Unsynced[missing]; !ok || len(syncErr.Unsynced) != 1 {
		t.Fatalf("unsynced kinds: %v, want only %s", syncErr.Unsynced, missing)
	}
	if !strings.Contains(err.Error(), "missing.lariat.dev/v1/Widget") {
		t.Fatalf("the sync error does not name the kind: %v", err)
	}
	// wrangler's Start stops at its Sync with an error naming the kind;
	// the adapter keeps Lariat's error for it.
	werr := e.core.Start(t.Context(), 2)
	if werr == nil || !strings.Contains(werr.Error(), "Widget") {
		t.Fatalf("wrangler's Start: %v, want an error naming Widget", werr)
	}
	cacheAdapter := e.adapter.SharedCacheFactory().(*lasso.SharedCacheFactory)
	if err := cacheAdapter.SyncError(); !errors.As(err, &syncErr) || syncErr.Unsynced[missing] == nil && !strings.Contains(err.Error(), "Widget") {
		t.Fatalf("SyncError after wrangler's Start: %v", err)
	}
}

// TestErrSkipIsNotRetried: wrangler's generic.ErrSkip (lasso's ErrIgnore)
// is Lariat's ErrIgnore: the key is not retried.
func TestErrSkipIsNotRetried(t *testing.T) {
	e := newEnv(t, &controller.SharedControllerFactoryOptions{Backoff: controller.Backoff{Base: time.Millisecond, Max: time.Millisecond}}, 0)
	cms := e.core.Core().V1().ConfigMap()
	s := newSeen()
	cms.OnChange(t.Context(), "skip", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm == nil || cm.Name != "skip" {
			return cm, nil
		}
		s.record(key, cm)
		return cm, fmt.Errorf("nothing to do: %w", generic.ErrSkip)
	})
	e.start(t)
	for _, name := range []string{"skip", "after"} {
		if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the handler ran", func() bool { return len(s.get(e.ns+"/skip")) > 0 })
	// A retried key would be handled again within milliseconds (1 ms
	// backoff); wait for the later object to be handled, and more.
	eventually(t, "the later object is cached", func() bool {
		_, err := cms.Cache().Get(e.ns, "after")
		return err == nil
	})
	time.Sleep(200 * time.Millisecond)
	if n := len(s.get(e.ns + "/skip")); n != 1 {
		t.Fatalf("a handler returning ErrSkip ran %d times, want 1", n)
	}
}

// TestWithAgent: lasso's WithAgent and WithImpersonation derive clients
// from the lasso client's Config, which must carry Lariat's serializer for
// the kind (wrangler's WithAgent factory falls back silently to the plain
// client when they fail, so they are called directly here).
func TestWithAgent(t *testing.T) {
	e := newEnv(t, nil, 0)
	if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sc, err := e.adapter.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	withAgent, err := sc.Client().WithAgent("lariat-test")
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := withAgent.Get(t.Context(), e.ns, "cm", &cm, metav1.GetOptions{}); err != nil || cm.Data["v"] != "1" {
		t.Fatalf("Get through WithAgent: %v, %v", cm.Data, err)
	}
	got, err := e.core.WithAgent("lariat-test").V1().ConfigMap().Get(e.ns, "cm", metav1.GetOptions{})
	if err != nil || got.Data["v"] != "1" {
		t.Fatalf("Get through wrangler's WithAgent: %v, %v", got, err)
	}
}
