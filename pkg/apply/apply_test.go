package apply_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) { controlplanetest.Main(m, controlplane.Options{}, &cp) }

func setup(t *testing.T) (*apply.Applier, *kubernetes.Clientset, string, *corev1.ConfigMap) {
	t.Helper()
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := apply.New(clients, apply.Options{FieldManager: "test-operator"})
	if err != nil {
		t.Fatal(err)
	}
	kube := controlplanetest.Clientset(cp.Config())
	ns := controlplanetest.Namespace(t, cp.Config())
	owner, err := kube.CoreV1().ConfigMaps(ns).Create(context.Background(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return a, kube, ns, owner
}

func cm(name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": value}}
}

func names(keys []apply.ObjectKey) []string {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k.GVK.Kind+"/"+k.Name)
	}
	slices.Sort(out)
	return out
}

func TestApplyUpdatesAndPrunesWholeKinds(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "children"}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"k": "v"}}
	if err := a.Apply(ctx, set, cm("a", "1"), secret); err != nil {
		t.Fatal(err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Data["v"] != "1" || got.Labels[apply.LabelSet] == "" || got.Annotations[apply.AnnotationSetID] != "children" {
		t.Fatalf("applied object: %+v", got.ObjectMeta)
	}
	if len(got.OwnerReferences) != 1 || got.OwnerReferences[0].UID != owner.UID {
		t.Fatalf("owner reference: %+v", got.OwnerReferences)
	}
	if _, err := kube.CoreV1().Secrets(ns).Get(ctx, "s", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}

	// The Secret kind drops out of the set: it is pruned, and a changes.
	if err := a.Apply(ctx, set, cm("a", "2")); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Secrets(ns).Get(ctx, "s", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the secret that left the set was not pruned: %v", err)
	}
	got, err = kube.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{})
	if err != nil || got.Data["v"] != "2" {
		t.Fatalf("a not updated: %v %v", got.Data, err)
	}

	// Another set of the same owner is left alone by this set's pruning.
	other := apply.Set{Owner: owner, ID: "other"}
	if err := a.Apply(ctx, other, cm("b", "x")); err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, set, cm("a", "2")); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "b", metav1.GetOptions{}); err != nil {
		t.Fatalf("another set's object was pruned: %v", err)
	}

	// The owner goes away: an empty apply prunes everything and the
	// inventory.
	if err := a.Apply(ctx, set); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a survived the empty set: %v", err)
	}
	list, err := kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, item := range list.Items {
		left = append(left, item.Name)
	}
	slices.Sort(left)
	// Left: the owner, the other set's object and its inventory; this
	// set's inventory is gone.
	if want := []string{"b", "lariat-set-" + hashOf(t, kube, ns, "b")[:20], "owner"}; !slices.Equal(left, want) {
		t.Fatalf("left in namespace: %v, want %v (owner, the other set and its inventory)", left, want)
	}
}

// hashOf reads the set hash from an applied object's label.
func hashOf(t *testing.T, kube *kubernetes.Clientset, ns, name string) string {
	t.Helper()
	got, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got.Labels[apply.LabelSet]
}

func TestDryRunPlansWithoutWriting(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "plan"}
	if err := a.Apply(ctx, set, cm("same", "1"), cm("changes", "1"), cm("goes", "1")); err != nil {
		t.Fatal(err)
	}
	before, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "changes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := a.DryRun(ctx, set, cm("same", "1"), cm("changes", "2"), cm("new", "1"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got []apply.ObjectKey, want ...string) {
		t.Helper()
		if !slices.Equal(names(got), want) {
			t.Errorf("%s: %v, want %v", what, names(got), want)
		}
	}
	check("create", plan.Create, "ConfigMap/new")
	check("update", plan.Update, "ConfigMap/changes")
	check("unchanged", plan.Unchanged, "ConfigMap/same")
	check("delete", plan.Delete, "ConfigMap/goes")

	after, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "changes", metav1.GetOptions{})
	if err != nil || after.ResourceVersion != before.ResourceVersion {
		t.Fatalf("dry run wrote: %v", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "new", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("dry run created an object: %v", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "goes", metav1.GetOptions{}); err != nil {
		t.Fatalf("dry run deleted an object: %v", err)
	}
}

func TestOwnerReferencesOnlyWhereLegal(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	elsewhere := controlplanetest.Namespace(t, cp.Config())
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "apply-test-" + ns}}
	cross := cm("cross", "1")
	cross.Namespace = elsewhere
	if err := a.Apply(ctx, apply.Set{Owner: owner, ID: "legal"}, cross, role, cm("local", "1")); err != nil {
		t.Fatal(err)
	}
	local, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "local", metav1.GetOptions{})
	if err != nil || len(local.OwnerReferences) != 1 {
		t.Fatalf("same-namespace object should be owned: %v %v", local.OwnerReferences, err)
	}
	crossGot, err := kube.CoreV1().ConfigMaps(elsewhere).Get(ctx, "cross", metav1.GetOptions{})
	if err != nil || len(crossGot.OwnerReferences) != 0 {
		t.Fatalf("cross-namespace object must not be owned by a namespaced owner: %v %v", crossGot.OwnerReferences, err)
	}
	gotRole, err := kube.RbacV1().ClusterRoles().Get(ctx, role.Name, metav1.GetOptions{})
	if err != nil || len(gotRole.OwnerReferences) != 0 {
		t.Fatalf("cluster-scoped object must not be owned by a namespaced owner: %v %v", gotRole.OwnerReferences, err)
	}
	// Pruning finds objects in other namespaces and cluster-scoped ones.
	if err := a.Apply(ctx, apply.Set{Owner: owner, ID: "legal"}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().ClusterRoles().Get(ctx, role.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("cluster-scoped object not pruned: %v", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(elsewhere).Get(ctx, "cross", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("cross-namespace object not pruned: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	a, _, _, _ := setup(t)
	if _, err := apply.New(nil, apply.Options{}); err == nil {
		t.Error("New without field manager must fail")
	}
	if err := a.Apply(t.Context(), apply.Set{}); err == nil {
		t.Error("a set with neither owner nor ID must fail")
	}
	if err := a.Apply(t.Context(), apply.Set{ID: "x"}, cm("no-namespace", "1")); err == nil {
		t.Error("a namespaced object without namespace or namespaced owner must fail")
	}
	if err := a.Apply(t.Context(), apply.Set{ID: "x"}, &corev1.ConfigMap{}); err == nil {
		t.Error("an object without a name must fail")
	}
}

// legacyHash is the hash a set had before identities dropped the owner's
// version: of the owner's description, as it was annotated
// ("group/version/Kind namespace/name"), and the set ID.
func legacyHash(ownerDesc, setID string) string {
	sum := sha256.Sum256([]byte(ownerDesc + "\x00" + setID))
	return hex.EncodeToString(sum[:])[:40]
}

// hpaOwner creates the HorizontalPodAutoscaler owner-hpa in ns through
// autoscaling/v2, and returns it as created and as read through
// autoscaling/v1: one owner read through two versions.
func hpaOwner(t *testing.T, kube *kubernetes.Clientset, ns string) (*autoscalingv2.HorizontalPodAutoscaler, *autoscalingv1.HorizontalPodAutoscaler) {
	t.Helper()
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "owner-hpa", Namespace: ns},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MaxReplicas:    2,
		},
	}
	created, err := kube.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(t.Context(), hpa, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	asV1, err := kube.AutoscalingV1().HorizontalPodAutoscalers(ns).Get(t.Context(), created.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created, asV1
}
