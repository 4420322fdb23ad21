package kubedescriptor_test

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestUnsyncedCacheIsNoView: a descriptor whose informer has not synced
// cannot say what exists. Its Retrieve fails, so a resync reports the kind by
// name and writes nothing, instead of reading "no objects".
func TestUnsyncedCacheIsNoView(t *testing.T) {
	ctx := t.Context()
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ns := controlplanetest.Namespace(t, cp.Config())
	// Never started: its informer never syncs, like one whose list RBAC
	// forbids or whose conversion webhook is down.
	s := scheduler(t, configMapKind, kubedescriptor.Options{Cache: cache.NewSharedCacheFactory(clients, nil), Namespace: ns})
	d := "kube:core/ConfigMap"
	key := kubedescriptor.KeyFor(configMapKind, ns, "web-config")
	commit(t, s.StartNBTransaction().SetValue(key, configMap(ns)))

	rec, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(ctx)
	var re *kvscheduler.RetrieveError
	if !errors.As(err, &re) || re.Descriptor != d || !strings.Contains(err.Error(), "not synced") {
		t.Fatalf("resync over an unsynced cache: error %v, want a failed retrieve saying the cache has not synced", err)
	}
	if ops := executed(rec); len(ops) != 0 {
		t.Fatalf("resync over an unsynced cache executed %v", ops)
	}
	if st := s.GetValueStatus(key); st.State != kvscheduler.Configured {
		t.Fatalf("value after the failed refresh: %+v", st)
	}
}

// TestResyncLeavesUnmanagedObjects: a full resync that names nothing deletes
// what the scheduler manages (its label, its field manager) and nothing else.
func TestResyncLeavesUnmanagedObjects(t *testing.T) {
	s, kube, ns := setup(t)
	ctx := t.Context()
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "foreign", Namespace: ns,
		Labels: map[string]string{kubedescriptor.LabelManagedBy: "someone-else"}}}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	plain := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns}}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, plain, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	commit(t, s.StartNBTransaction().SetValue(kubedescriptor.KeyFor(configMapKind, ns, "web-config"), configMap(ns)))
	rec := commit(t, s.StartNBTransaction().WithResync(kvscheduler.FullResync))
	if ops := executed(rec); len(ops) != 1 || ops[0] != "DELETE "+kubedescriptor.KeyFor(configMapKind, ns, "web-config") {
		t.Fatalf("full resync without values executed %v, want only the managed object's delete", ops)
	}
	for _, name := range []string{"foreign", "plain"} {
		if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}
