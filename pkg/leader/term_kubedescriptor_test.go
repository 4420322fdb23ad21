package leader_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// configMapGVK is the kind of the kubedescriptor tests' objects.
var configMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// TestKubedescriptorCreateCarriesItsTerm: pkg/kubedescriptor creates an
// object by a server-side apply. Through the fence that apply must be
// stamped with the term it is sent in, so that the term policy refuses it
// once the term is over (TestCreateByApplyCarriesItsTerm shows the policy
// refuses a stamped apply of an ended term); unstamped, a stalled apply
// could create the object after the term ended.
func TestKubedescriptorCreateCarriesItsTerm(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	clients, err := client.NewSharedClientFactory(e.Fence(cp.Config()), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := kubedescriptor.ForObject(&corev1.ConfigMap{}, kubedescriptor.Options{Clients: clients, FieldManager: "term-test",
		Namespace: ns, Context: t.Context()})
	if err != nil {
		t.Fatal(err)
	}
	var first string
	var cm *corev1.ConfigMap
	inTerm(t, e, func(ctx context.Context) {
		first = currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, first)
		cm = &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "described", Namespace: ns}, Data: map[string]string{"k": "v"}}
		key, err := kubedescriptor.Key(cm)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Create(ctx, key, cm); err != nil {
			t.Fatalf("create in the current term: %v", err)
		}
	})
	got, err := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns).Get(t.Context(), "described", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels[leader.TermIDLabel] != termID(first) || got.Data["k"] != "v" {
		t.Errorf("created by kubedescriptor: stamp %q, data %v; want the term %q it was sent in", got.Labels[leader.TermIDLabel], got.Data, first)
	}

	// The stamp is not drift: the object read back equals the value, so
	// a steady object is not applied again every pass.
	key, _ := kubedescriptor.Key(cm)
	read, err := d.Retrieve(t.Context(), []kvscheduler.KVWithMetadata{{Key: key, Value: cm}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, kv := range read {
		if kv.Key != key {
			continue
		}
		found = true
		if !d.ValueComparator(key, cm, kv.Value) {
			t.Errorf("the stamped object read back differs from its value: it would be applied again every pass")
		}
	}
	if !found {
		t.Errorf("the created object %s was not read back", key)
	}
}

// TestKubedescriptorStampsOnlyWhatItCreates: through the fence, a
// kubedescriptor create of an object that exists is no create-only
// apply: an object another manager made is refused untouched
// (NotManagedError), and one the descriptor's field manager holds is
// applied without a stamp, its labels its own.
func TestKubedescriptorStampsOnlyWhatItCreates(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	clients, err := client.NewSharedClientFactory(e.Fence(cp.Config()), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := kubedescriptor.ForObject(&corev1.ConfigMap{}, kubedescriptor.Options{Clients: clients, FieldManager: "term-test",
		Namespace: ns, Context: t.Context()})
	if err != nil {
		t.Fatal(err)
	}
	kube := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns)
	for name, by := range map[string]string{"theirs": "someone-else", "ours": "term-test"} {
		// Labelled and stamped as the manager's apply would (a label
		// alone is a copy's, kubedescriptor.AnnotationAppliedAs).
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
			Labels:      map[string]string{kubedescriptor.LabelManagedBy: by},
			Annotations: map[string]string{kubedescriptor.AnnotationAppliedAs: by + ":" + kubedescriptor.KeyFor(configMapGVK, ns, name)}}, Data: map[string]string{"k": "old"}}
		if _, err := kube.Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	inTerm(t, e, func(ctx context.Context) {
		waitAdmitted(t, ctx, ns, currentTerm(t, ns))
		for _, name := range []string{"theirs", "ours"} {
			cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"k": "new"}}
			key, _ := kubedescriptor.Key(cm)
			_, err := d.Create(ctx, key, cm)
			var notManaged *kubedescriptor.NotManagedError
			switch {
			case name == "theirs" && !errors.As(err, &notManaged):
				t.Errorf("create of %s, made by another manager: %v; want a NotManagedError", name, err)
			case name == "ours" && err != nil:
				t.Errorf("create of %s, the descriptor's own: %v", name, err)
			}
		}
	})
	for name, want := range map[string]string{"theirs": "old", "ours": "new"} {
		got, err := kube.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Data["k"] != want || got.Labels[leader.TermIDLabel] != "" || got.Labels[leader.TermLeaseLabel] != "" {
			t.Errorf("%s after the create: data %v, labels %v; want data %q and no stamp", name, got.Data, got.Labels, want)
		}
	}
}
