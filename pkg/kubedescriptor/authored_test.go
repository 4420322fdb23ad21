package kubedescriptor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// authoredSetup is a scheduler with one ConfigMap descriptor of a fresh
// namespace served from a synced lean cache (which drops managedFields),
// logging to the returned hook, with the clientset a user acts through.
func authoredSetup(t *testing.T) (*kvscheduler.Scheduler, *kvscheduler.Descriptor, *cache.SharedCacheFactory, *logtest.Hook, *kubernetes.Clientset, string) {
	t.Helper()
	ctx := t.Context()
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ns := controlplanetest.Namespace(t, cp.Config())
	caches := cache.NewSharedCacheFactory(clients, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}})
	logger, hook := logtest.NewNullLogger()
	d, err := kubedescriptor.New(configMapKind, kubedescriptor.Options{Clients: clients, Cache: caches, FieldManager: fieldManager, Namespace: ns, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := caches.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := caches.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.RegisterDescriptor(ctx, d); err != nil {
		t.Fatal(err)
	}
	return s, d, caches, hook, controlplanetest.Clientset(cp.Config()), ns
}

// waitCached waits until the cache holds the object of uid at ns/name: a
// resync from a cache that has not seen it yet would prove nothing.
func waitCached(t *testing.T, caches *cache.SharedCacheFactory, ns, name string, uid types.UID) {
	t.Helper()
	informer, err := caches.ForKind(configMapKind)
	if err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextCancel(t.Context(), 10*time.Millisecond, true, func(context.Context) (bool, error) {
		item, ok, err := informer.GetStore().GetByKey(ns + "/" + name)
		if err != nil || !ok {
			return false, err
		}
		m, err := meta.Accessor(item)
		return err == nil && m.GetUID() == uid, err
	})
	if err != nil {
		t.Fatalf("the cache never held %s/%s: %v", ns, name, err)
	}
}

// TestACopyKeepingTheStampIsNotTheDescriptors: a whole copy of a managed
// object (kubectl get -o yaml keeps the annotations, the stamp of
// authorship included) under a new name is read from the cache, which
// drops managedFields. A full resync neither deletes nor changes it, it
// is named once in the log however many resyncs see it, and a value
// wanted at its name is refused (a NotManagedError saying it is a copy)
// instead of taking it over.
func TestACopyKeepingTheStampIsNotTheDescriptors(t *testing.T) {
	s, d, caches, hook, kube, ns := authoredSetup(t)
	ctx := t.Context()
	key := kubedescriptor.KeyFor(configMapKind, ns, "web-config")
	commit(t, s.StartNBTransaction().SetValue(key, configMap(ns)))
	orig, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := orig.Annotations[kubedescriptor.AnnotationAppliedAs]; got != fieldManager+":"+key {
		t.Fatalf("the applied object's stamp is %q, want %q", got, fieldManager+":"+key)
	}
	cpy := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "my-copy", Namespace: ns, Labels: orig.Labels, Annotations: orig.Annotations}, Data: orig.Data}
	made, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cpy, metav1.CreateOptions{FieldManager: "kubectl-create"})
	if err != nil {
		t.Fatal(err)
	}
	copyKey := kubedescriptor.KeyFor(configMapKind, ns, "my-copy")
	waitCached(t, caches, ns, "my-copy", made.UID)
	for range 2 {
		rec := commit(t, s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue(key, configMap(ns)))
		got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "my-copy", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the copy after a full resync (executed %v): %v", executed(rec), err)
		}
		if got.ResourceVersion != made.ResourceVersion {
			t.Fatalf("the full resync changed the copy (executed %v)", executed(rec))
		}
	}
	if n := len(hook.AllEntries()); n != 1 || hook.LastEntry().Data["key"] != copyKey || hook.LastEntry().Level != logrus.WarnLevel {
		t.Fatalf("the copy was named %d times in the log, want once as a warning naming %s: %v", n, copyKey, hook.AllEntries())
	}
	want := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "my-copy", Namespace: ns}, Data: map[string]string{"greeting": "taken"}}
	_, err = d.Create(ctx, copyKey, want)
	var nm *kubedescriptor.NotManagedError
	if !errors.As(err, &nm) || !nm.Copy {
		t.Fatalf("create at the copy's name: %v; want a NotManagedError saying it is a copy", err)
	}
	if err := d.Delete(ctx, copyKey, want, nil); err != nil {
		t.Fatalf("delete without a UID at the copy's name: %v", err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "my-copy", metav1.GetOptions{})
	if err != nil || got.ResourceVersion != made.ResourceVersion {
		t.Fatalf("the copy after a create and a delete at its name: %v, %v", got, err)
	}
}

// TestAnObjectAppliedBeforeTheStampIsStillTheDescriptors: an object the
// descriptor's field manager applied with the label before stamps existed
// (an upgrade) is still its own, proved by its managedFields (read from
// the API server, the cache having dropped them): wanted, it is kept
// without a re-create; no longer wanted, a full resync deletes it (it is
// not orphaned). Another labelled object without an Apply of the field
// manager (a copy made by kubectl create) is kept.
func TestAnObjectAppliedBeforeTheStampIsStillTheDescriptors(t *testing.T) {
	s, _, caches, hook, kube, ns := authoredSetup(t)
	ctx := t.Context()
	legacy := func(name, manager string) *corev1.ConfigMap {
		t.Helper()
		body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","labels":{"` +
			kubedescriptor.LabelManagedBy + `":"` + fieldManager + `"}},"data":{"greeting":"hello"}}`
		got, err := kube.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: manager})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	kept := legacy("web-config", fieldManager)
	legacy("obsolete", fieldManager)
	copied := legacy("copied", "kubectl")
	waitCached(t, caches, ns, "copied", copied.UID)
	key := kubedescriptor.KeyFor(configMapKind, ns, "web-config")
	rec := commit(t, s.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue(key, configMap(ns)))
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "obsolete", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the unwanted object applied before the stamp, after a full resync (executed %v): %v; want it deleted", executed(rec), err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "copied", metav1.GetOptions{})
	if err != nil || got.UID != copied.UID || got.ResourceVersion != copied.ResourceVersion {
		t.Errorf("the labelled object another manager made, after a full resync (executed %v): %v; want it kept as it was", executed(rec), err)
	}
	if n := len(hook.AllEntries()); n != 1 || hook.LastEntry().Data["key"] != kubedescriptor.KeyFor(configMapKind, ns, "copied") {
		t.Errorf("log entries %v; want one naming the copy", hook.AllEntries())
	}
	changed := configMap(ns)
	changed.Data["greeting"] = "again"
	rec = commit(t, s.StartNBTransaction().SetValue(key, changed))
	got, err = kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{})
	if err != nil || got.UID != kept.UID || got.Annotations[kubedescriptor.AnnotationAppliedAs] != fieldManager+":"+key {
		t.Fatalf("the wanted object applied before the stamp, after an update (executed %v): %v, %v; want it kept and stamped", executed(rec), got, err)
	}
}
