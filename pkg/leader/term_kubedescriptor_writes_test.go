package leader_test

import (
	"context"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestKubedescriptorUpdateOfAnEndedTermNeverLandsOverTheNextLeaders: a
// kubedescriptor Update sent in a term, held in the network while the
// term ends and the next leader writes the object, must not overwrite
// the next leader's write when it is delivered: it is conditional on the
// object as the descriptor read it, so it conflicts.
func TestKubedescriptorUpdateOfAnEndedTermNeverLandsOverTheNextLeaders(t *testing.T) {
	heldWriteAfterTheNextLeaders(t, "updated", func(ctx context.Context, d *kvscheduler.Descriptor, ns, key string, md any) {
		_, _ = d.Update(ctx, key, describedConfigMap(ns, "updated", "v"), describedConfigMap(ns, "updated", "stale"), md)
	})
}

// TestKubedescriptorDeleteOfAnEndedTermNeverDeletesTheNextLeaders: a
// kubedescriptor Delete sent in a term, held in the network while the
// term ends and the next leader writes the object (it wants it, at a new
// value), must not delete it when it is delivered: it is conditional on
// the object as the descriptor read it, not only on its UID, so it
// conflicts.
func TestKubedescriptorDeleteOfAnEndedTermNeverDeletesTheNextLeaders(t *testing.T) {
	heldWriteAfterTheNextLeaders(t, "deleted", func(ctx context.Context, d *kvscheduler.Descriptor, ns, key string, md any) {
		_ = d.Delete(ctx, key, describedConfigMap(ns, "deleted", "v"), md)
	})
}

// heldWriteAfterTheNextLeaders creates the ConfigMap name by a
// kubedescriptor through the fence, sends write of it (by a descriptor
// whose network holds its writes) in the same term, ends the term, writes
// the object as the next leader would, and delivers the held write: it
// must be refused, the next leader's write kept.
func heldWriteAfterTheNextLeaders(t *testing.T, name string, write func(ctx context.Context, d *kvscheduler.Descriptor, ns, key string, md any)) {
	t.Helper()
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	admin := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns)
	opts := kubedescriptor.Options{FieldManager: "term-test", Namespace: ns, Context: t.Context()}
	var kept *keptRequest
	inTerm(t, e, func(ctx context.Context) {
		waitAdmitted(t, ctx, ns, currentTerm(t, ns))
		key, md := createDescribed(ctx, t, describe(t, opts, e.Fence(cp.Config())), ns, name)
		net := &keptWrites{}
		write(ctx, describe(t, opts, e.Fence(keepWritesButReviews(net, cp.Config()))), ns, key, md)
		if kept = net.take(); kept == nil {
			t.Fatalf("%s: the write did not reach the network", name)
		}
	})
	// The next leader writes the object: its value of it changed.
	cm, err := admin.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "next"
	if _, err := admin.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	status := kept.replay(t)
	got, err := admin.Get(t.Context(), name, metav1.GetOptions{})
	if status < http.StatusMultipleChoices || err != nil || got.Data["k"] != "next" {
		t.Errorf("%s: the kubedescriptor %s sent in an ended term was delivered after the next leader's write and got %d "+
			"(object read after it: %v, error %v); want it refused, the next leader's write kept (body %q)",
			name, kept.method, status, got.Data, err, kept.body)
	}
}

// describe returns a ConfigMap descriptor with opts over cfg.
func describe(t *testing.T, opts kubedescriptor.Options, cfg *rest.Config) *kvscheduler.Descriptor {
	t.Helper()
	clients, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.Clients = clients
	d, err := kubedescriptor.ForObject(&corev1.ConfigMap{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// describedConfigMap is the value of the ConfigMap name with data k=v.
func describedConfigMap(ns, name, v string) *corev1.ConfigMap {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"k": v}}
}

// createDescribed creates the ConfigMap name by d and returns its key and
// the metadata the create returned.
func createDescribed(ctx context.Context, t *testing.T, d *kvscheduler.Descriptor, ns, name string) (string, any) {
	t.Helper()
	cm := describedConfigMap(ns, name, "v")
	key, err := kubedescriptor.Key(cm)
	if err != nil {
		t.Fatal(err)
	}
	md, err := d.Create(ctx, key, cm)
	if err != nil {
		t.Fatalf("create %s in the current term: %v", name, err)
	}
	return key, md
}
