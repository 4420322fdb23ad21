package cache_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	controlplanetest.Main(m, controlplane.Options{CRDDirs: []string{testkinds.CRDDir()}}, &cp)
}

var (
	configMapGVK = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	secretGVK    = corev1.SchemeGroupVersion.WithKind("Secret")
)

func newCacheFactory(t testing.TB, cfg *rest.Config, opts *cache.SharedCacheFactoryOptions) *cache.SharedCacheFactory {
	t.Helper()
	clients, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cache.NewSharedCacheFactory(clients, opts)
}

func kube(t testing.TB) *kubernetes.Clientset {
	return kubernetes.NewForConfigOrDie(cp.Config())
}

// applyConfigMap writes a configmap the way kubectl apply does: server-side
// apply (managedFields) plus the last-applied annotation.
func applyConfigMap(t *testing.T, ns, name string, labels map[string]string) {
	t.Helper()
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, Labels: labels,
			Annotations: map[string]string{cache.LastAppliedAnnotation: `{"big":"blob"}`, "keep": "me"},
		},
		Data: map[string]string{"k": "v"},
	}
	data, err := json.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	force := true
	_, err = kube(t).CoreV1().ConfigMaps(ns).Patch(t.Context(), name, types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: "test", Force: &force})
	if err != nil {
		t.Fatal(err)
	}
}

func startAndSync(t testing.TB, f *cache.SharedCacheFactory) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	syncCtx, cancelSync := context.WithTimeout(ctx, time.Minute)
	defer cancelSync()
	if _, err := f.WaitForCacheSync(syncCtx); err != nil {
		t.Fatal(err)
	}
}

func cachedConfigMap(t *testing.T, informer toolscache.SharedIndexInformer, ns, name string) *corev1.ConfigMap {
	t.Helper()
	obj, ok, err := informer.GetStore().GetByKey(ns + "/" + name)
	if err != nil || !ok {
		t.Fatalf("%s/%s not in cache (err %v)", ns, name, err)
	}
	return obj.(*corev1.ConfigMap)
}

func TestLeanByDefaultWithOptOut(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	applyConfigMap(t, ns, "applied", nil)

	lean := newCacheFactory(t, cp.Config(), nil)
	full := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
		Kinds: map[schema.GroupVersionKind]cache.KindOptions{configMapGVK: {KeepAllMetadata: ptr.To(true)}},
	})
	leaner := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
		Kinds: map[schema.GroupVersionKind]cache.KindOptions{configMapGVK: {StripLastApplied: ptr.To(true)}},
	})
	informers := map[*cache.SharedCacheFactory]toolscache.SharedIndexInformer{}
	for _, f := range []*cache.SharedCacheFactory{lean, full, leaner} {
		informer, err := f.ForKind(configMapGVK)
		if err != nil {
			t.Fatal(err)
		}
		informers[f] = informer
		startAndSync(t, f)
	}

	cm := cachedConfigMap(t, informers[lean], ns, "applied")
	if len(cm.ManagedFields) != 0 {
		t.Errorf("lean cache kept managedFields: %v", cm.ManagedFields)
	}
	if cm.Annotations[cache.LastAppliedAnnotation] == "" {
		t.Error("lean cache dropped the last-applied annotation, which an Update would then delete")
	}
	if cm.Annotations["keep"] != "me" || cm.Data["k"] != "v" {
		t.Errorf("lean cache dropped more than managedFields: %v %v", cm.Annotations, cm.Data)
	}
	cm = cachedConfigMap(t, informers[full], ns, "applied")
	if len(cm.ManagedFields) == 0 || cm.Annotations[cache.LastAppliedAnnotation] == "" {
		t.Error("KeepAllMetadata did not keep managedFields and the annotation")
	}
	cm = cachedConfigMap(t, informers[leaner], ns, "applied")
	if _, ok := cm.Annotations[cache.LastAppliedAnnotation]; ok || len(cm.ManagedFields) != 0 {
		t.Errorf("StripLastApplied kept the annotation or managedFields: %v, %d managed fields", cm.Annotations, len(cm.ManagedFields))
	}
	if cm.Annotations["keep"] != "me" {
		t.Errorf("StripLastApplied dropped other annotations: %v", cm.Annotations)
	}
}

func TestScopingIndexersAndTransforms(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	other := controlplanetest.Namespace(t, cp.Config())
	applyConfigMap(t, ns, "blue-1", map[string]string{"color": "blue"})
	applyConfigMap(t, ns, "blue-2", map[string]string{"color": "blue"})
	applyConfigMap(t, ns, "red", map[string]string{"color": "red"})
	applyConfigMap(t, other, "blue-elsewhere", map[string]string{"color": "blue"})

	byColor := toolscache.Indexers{"color": func(obj any) ([]string, error) {
		return []string{obj.(*corev1.ConfigMap).Labels["color"]}, nil
	}}
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns},
		Kinds: map[schema.GroupVersionKind]cache.KindOptions{configMapGVK: {
			LabelSelector: ptr.To("color in (blue,red)"),
			Indexers:      byColor,
			Transform: func(obj any) (any, error) {
				if cm, ok := obj.(*corev1.ConfigMap); ok {
					cm.Data = map[string]string{"transformed": "yes"}
				}
				return obj, nil
			},
		}},
	})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	startAndSync(t, f)

	keys := informer.GetStore().ListKeys()
	if len(keys) != 3 {
		t.Fatalf("cached %v; want the 3 labelled configmaps of %s only", keys, ns)
	}
	blue, err := informer.GetIndexer().ByIndex("color", "blue")
	if err != nil || len(blue) != 2 {
		t.Fatalf("index color=blue: %d objects, %v", len(blue), err)
	}
	cm := cachedConfigMap(t, informer, ns, "red")
	if cm.Data["transformed"] != "yes" || len(cm.ManagedFields) != 0 {
		t.Fatalf("user transform or lean transform not applied: %v, %d managed fields", cm.Data, len(cm.ManagedFields))
	}
}

func TestIndexersAddedAfterStartWithDefaultOptions(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	applyConfigMap(t, ns, "blue", map[string]string{"color": "blue"})
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}})
	cms, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := f.ForKind(secretGVK)
	if err != nil {
		t.Fatal(err)
	}
	startAndSync(t, f)
	err = cms.AddIndexers(toolscache.Indexers{"color": func(obj any) ([]string, error) {
		return []string{obj.(*corev1.ConfigMap).Labels["color"]}, nil
	}})
	if err != nil {
		t.Fatalf("AddIndexers after start with no indexers configured: %v", err)
	}
	blue, err := cms.GetIndexer().ByIndex("color", "blue")
	if err != nil || len(blue) != 1 {
		t.Fatalf("existing objects not indexed: %d, %v", len(blue), err)
	}
	// Each informer has its own indexers: the other kind did not get it.
	if _, err := secrets.GetIndexer().ByIndex("color", "blue"); err == nil {
		t.Fatal("an indexer added to ConfigMaps appeared on Secrets")
	}
}

func TestUnsyncableKindsAreNamedAndDoNotBlockOthers(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	applyConfigMap(t, ns, "present", nil)

	// The user may read configmaps but not secrets. Cluster-scoped names
	// carry the namespace, so the test can run again on the same server.
	user := "limited-" + ns
	ctx := t.Context()
	_, err := kube(t).RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps-" + ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = kube(t).RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "read-configmaps-" + ns},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	limited := cp.Config()
	limited.Impersonate = rest.ImpersonationConfig{UserName: user}
	// Discovery is allowed for every authenticated user, so the mapping of
	// the missing kind fails as "no match", and of secrets as "forbidden".
	f := newCacheFactory(t, limited, nil)
	cms, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ForKind(secretGVK); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ForKind(testkinds.GadgetGVK); err != nil {
		t.Fatalf("ForKind of a kind without CRD must not fail or call the server: %v", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := f.Start(runCtx); err != nil {
		t.Fatal(err)
	}
	syncCtx, cancelSync := context.WithTimeout(runCtx, 5*time.Second)
	defer cancelSync()
	synced, err := f.WaitForCacheSync(syncCtx)

	var syncErr *cache.SyncError
	if !errors.As(err, &syncErr) {
		t.Fatalf("want a *cache.SyncError, got %v", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("SyncError does not unwrap to its cause: %v", err)
	}
	if !synced[configMapGVK] || synced[secretGVK] || synced[testkinds.GadgetGVK] {
		t.Fatalf("synced = %v; want configmaps only", synced)
	}
	if len(syncErr.Unsynced) != 2 {
		t.Fatalf("Unsynced = %v", syncErr.Unsynced)
	}
	msg := err.Error()
	for _, want := range []string{"v1/Secret", "late.lariat.dev/v1/Gadget", "forbidden"} {
		if !strings.Contains(msg, want) {
			t.Errorf("sync error does not mention %q:\n%s", want, msg)
		}
	}
	if _, ok, _ := cms.GetStore().GetByKey(ns + "/present"); !ok {
		t.Error("the configmap cache is not serving while other kinds fail")
	}
}

func TestStartAgainForLateKinds(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	applyConfigMap(t, ns, "cm", nil)
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}})
	if _, err := f.ForKind(configMapGVK); err != nil {
		t.Fatal(err)
	}
	startAndSync(t, f)

	widgets, err := f.ForKind(testkinds.WidgetGVK)
	if err != nil {
		t.Fatal(err)
	}
	if widgets.HasSynced() {
		t.Fatal("an informer created after Start is running before the next Start")
	}
	startAndSync(t, f)
	if !widgets.HasSynced() {
		t.Fatal("second Start did not start the late informer")
	}
}

func TestSyncTimeoutWithoutDeadline(t *testing.T) {
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{SyncTimeout: 300 * time.Millisecond})
	if _, err := f.ForKind(testkinds.GadgetGVK); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := f.WaitForCacheSync(ctx) // no deadline: the factory's timeout applies
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "Gadget") {
		t.Fatalf("want a timeout naming Gadget, got %v", err)
	}
}

// TestKindOptionsCanSayNotThis overrides every narrowing default with an
// empty value for one kind: all namespaces, no label selector, and the
// last-applied annotation kept although the default strips it.
func TestKindOptionsCanSayNotThis(t *testing.T) {
	a := controlplanetest.Namespace(t, cp.Config())
	b := controlplanetest.Namespace(t, cp.Config())
	applyConfigMap(t, a, "in-a", map[string]string{"team": "x"})
	applyConfigMap(t, b, "in-b", nil)

	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: a, LabelSelector: "team=x", StripLastApplied: true},
		Kinds: map[schema.GroupVersionKind]cache.KindOptions{configMapGVK: {
			Namespace: ptr.To(metav1.NamespaceAll), LabelSelector: ptr.To(""), StripLastApplied: ptr.To(false),
		}},
	})
	cms, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := f.ForKind(secretGVK)
	if err != nil {
		t.Fatal(err)
	}
	startAndSync(t, f)

	cm := cachedConfigMap(t, cms, a, "in-a")
	if cm.Annotations[cache.LastAppliedAnnotation] == "" {
		t.Error("the kind's StripLastApplied false did not override the default's true")
	}
	if _, ok, _ := cms.GetStore().GetByKey(b + "/in-b"); !ok {
		t.Errorf("the kind's all-namespaces, no-selector options did not override the default: cached %v", cms.GetStore().ListKeys())
	}
	// The other kind keeps the defaults.
	for _, key := range secrets.GetStore().ListKeys() {
		if !strings.HasPrefix(key, a+"/") {
			t.Errorf("a kind without options left the default namespace: %s", key)
		}
	}
}
