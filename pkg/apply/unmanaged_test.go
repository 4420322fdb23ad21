package apply_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// byHand is the field manager of the objects the tests make "by hand", as
// a user with kubectl or another tool would.
const byHand = "by-hand"

// handMadeCM creates a ConfigMap in ns as someone else than the set would,
// with a label naming its manager.
func handMadeCM(t *testing.T, kube *kubernetes.Clientset, ns, name string, labels map[string]string) *corev1.ConfigMap {
	t.Helper()
	obj := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Data:       map[string]string{"v": "by hand"},
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), obj, metav1.CreateOptions{FieldManager: byHand})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// handMadeNamespace creates a Namespace by hand, holding a ConfigMap (what
// a pruned Namespace would take with it), and deletes it at the end.
func handMadeNamespace(t *testing.T, kube *kubernetes.Clientset, name string, labels map[string]string) *corev1.Namespace {
	t.Helper()
	got, err := kube.CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{FieldManager: byHand})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.CoreV1().Namespaces().Delete(t.Context(), name, metav1.DeleteOptions{}) })
	handMadeCM(t, kube, name, "content", nil)
	return got
}

func namespaceObj(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"from": "the-set"}}}
}

// notManaged returns the *apply.NotManagedError about the object named
// name in err's tree, nil when there is none.
func notManaged(err error, name string) *apply.NotManagedError {
	var found *apply.NotManagedError
	var walk func(error)
	walk = func(err error) {
		var nm *apply.NotManagedError
		switch e := err.(type) {
		case interface{ Unwrap() []error }:
			for _, cause := range e.Unwrap() {
				walk(cause)
			}
		default:
			if errors.As(err, &nm) && nm.Object.Name == name {
				found = nm
			}
		}
	}
	walk(err)
	return found
}

// unchanged fails unless the object is as it was made: same UID and
// resourceVersion (nothing was written to it), no set label, no owner
// reference.
func unchanged(t *testing.T, what string, made, now metav1.Object) {
	t.Helper()
	if now.GetUID() != made.GetUID() || now.GetResourceVersion() != made.GetResourceVersion() {
		t.Errorf("%s was written to: uid %s→%s, resourceVersion %s→%s", what, made.GetUID(), now.GetUID(), made.GetResourceVersion(), now.GetResourceVersion())
	}
	if now.GetLabels()[apply.LabelSet] != "" || len(now.GetOwnerReferences()) != 0 {
		t.Errorf("%s was taken into the set: labels %v, owner references %v", what, now.GetLabels(), now.GetOwnerReferences())
	}
}

// checkRefusal checks that the refusal of the hand-made ConfigMap says who
// manages it, which set was refused and how to take it over.
func checkRefusal(t *testing.T, refused *apply.NotManagedError, ns string) {
	t.Helper()
	if !slices.Contains(refused.FieldManagers, byHand) || refused.ManagedBy["app.kubernetes.io/managed-by"] != "helm" {
		t.Errorf("the refusal does not say who manages the ConfigMap: %+v", refused)
	}
	if refused.SetID != "kids" || !strings.Contains(refused.Owner, ns+"/owner") {
		t.Errorf("the refusal does not name the set: %+v", refused)
	}
	for _, want := range []string{"ConfigMap " + ns + "/handmade", byHand, "app.kubernetes.io/managed-by=helm", apply.LabelAdopt + "=true", "Set.AdoptKinds"} {
		if !strings.Contains(refused.Error(), want) {
			t.Errorf("the refusal %q does not say %q", refused.Error(), want)
		}
	}
}

// A ConfigMap and a Namespace made by hand that a set names are not taken
// over: Apply fails for each with a *NotManagedError naming the object, its
// field managers and labels and how to take it over; nothing is written to
// them; the rest of the set is applied; and when the owner is gone and the
// set is pruned whole, both are still there (the Namespace with what it
// holds).
func TestUnmanagedObjectsAreRefusedAndSurviveTheSet(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	madeCM := handMadeCM(t, kube, ns, "handmade", map[string]string{"app.kubernetes.io/managed-by": "helm"})
	nsName := "hm-" + ns
	madeNS := handMadeNamespace(t, kube, nsName, nil)
	set := apply.Set{Owner: owner, ID: "kids"}

	err := a.Apply(ctx, set, cm("handmade", "from the set"), namespaceObj(nsName), cm("own", "1"))
	refusedCM, refusedNS := notManaged(err, "handmade"), notManaged(err, nsName)
	if refusedCM == nil || refusedNS == nil {
		t.Errorf("apply of a set naming hand-made objects: %v, want a *apply.NotManagedError for each", err)
	} else {
		checkRefusal(t, refusedCM, ns)
	}
	if _, err := a.DryRun(ctx, set, cm("handmade", "from the set")); notManaged(err, "handmade") == nil {
		t.Errorf("dry run of a set naming a hand-made object: %v, want a *apply.NotManagedError", err)
	}

	gotCM, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "handmade", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unchanged(t, "the hand-made ConfigMap", madeCM, gotCM)
	gotNS, err := kube.CoreV1().Namespaces().Get(ctx, nsName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unchanged(t, "the hand-made Namespace", madeNS, gotNS)
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "own", metav1.GetOptions{}); err != nil {
		t.Fatalf("the rest of the set was not applied: %v", err)
	}

	// The owner goes: the set is pruned whole, its own object with it.
	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gone := apply.Set{ID: "kids", OwnerKey: &apply.ObjectKey{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Namespace: ns, Name: owner.Name}}
	if err := a.Apply(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "own", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the set's own object survived its pruning: %v", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "handmade", metav1.GetOptions{}); err != nil {
		t.Errorf("the hand-made ConfigMap did not survive the set: %v", err)
	}
	if got, err := kube.CoreV1().Namespaces().Get(ctx, nsName, metav1.GetOptions{}); err != nil || got.DeletionTimestamp != nil {
		t.Errorf("the hand-made Namespace did not survive the set: %v %v", err, got.DeletionTimestamp)
	}
	if _, err := kube.CoreV1().ConfigMaps(nsName).Get(ctx, "content", metav1.GetOptions{}); err != nil {
		t.Errorf("what the hand-made Namespace holds did not survive the set: %v", err)
	}
}

// Taking over is explicit, both ways: the set's option (Set.AdoptKinds for
// listed kinds, Set.Adopt for all), or the label LabelAdopt=true the user
// puts on the object. An object taken over is the set's from then on: its
// pruning deletes it when the set no longer names it. A kind the option
// does not list is still refused.
func TestAdoptionIsExplicit(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	handMadeCM(t, kube, ns, "by-option", nil)
	handMadeCM(t, kube, ns, "by-label", map[string]string{apply.LabelAdopt: "true"})
	nsName := "hm-" + ns
	handMadeNamespace(t, kube, nsName, nil)

	set := apply.Set{Owner: owner, ID: "kids", AdoptKinds: []schema.GroupKind{{Kind: "ConfigMap"}}}
	err := a.Apply(ctx, set, cm("by-option", "set"), namespaceObj(nsName))
	if notManaged(err, nsName) == nil || notManaged(err, "by-option") != nil {
		t.Fatalf("AdoptKinds ConfigMap: %v, want only the Namespace refused", err)
	}
	if err := a.Apply(ctx, apply.Set{Owner: owner, ID: "labelled"}, cm("by-label", "set")); err != nil {
		t.Fatalf("an object labelled %s=true: %v", apply.LabelAdopt, err)
	}
	if err := a.Apply(ctx, apply.Set{Owner: owner, ID: "all", Adopt: true}, namespaceObj(nsName)); err != nil {
		t.Fatalf("Set.Adopt: %v", err)
	}
	for _, name := range []string{"by-option", "by-label"} {
		got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || got.Data["v"] != "set" || got.Labels[apply.LabelSet] == "" || len(got.OwnerReferences) != 1 {
			t.Fatalf("%s was not taken over: %v %v", name, got, err)
		}
	}
	if got, err := kube.CoreV1().Namespaces().Get(ctx, nsName, metav1.GetOptions{}); err != nil || got.Labels[apply.LabelSet] == "" {
		t.Fatalf("the Namespace was not taken over with Set.Adopt: %v %v", got, err)
	}

	// Taken over, they are pruned with their sets.
	for _, s := range []apply.Set{set, {Owner: owner, ID: "labelled"}, {Owner: owner, ID: "all"}} {
		if err := a.Apply(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"by-option", "by-label"} {
		if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s, taken over, was not pruned with its set: %v", name, err)
		}
	}
	if got, err := kube.CoreV1().Namespaces().Get(ctx, nsName, metav1.GetOptions{}); err == nil && got.DeletionTimestamp == nil {
		t.Errorf("the Namespace, taken over, was not pruned with its set")
	}
}

// An object an older Lariat set made (labelled with the set's hash, with
// the set's annotations, written by another field manager) is the set's:
// it is applied and pruned as before; the refusal is only for objects no
// set holds. (This held before the refusal too: it guards against the
// refusal reaching the set's own objects.)
func TestObjectsOfAnOlderSetAreStillManaged(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "kids"}
	if err := a.Apply(ctx, set, cm("probe", "1")); err != nil {
		t.Fatal(err)
	}
	old := cm("older", "old")
	old.Labels = map[string]string{apply.LabelSet: hashOf(t, kube, ns, "probe")}
	old.Annotations = map[string]string{apply.AnnotationSetID: "kids", apply.AnnotationOwner: "v1/ConfigMap " + ns + "/owner"}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, old, metav1.CreateOptions{FieldManager: "older-operator"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, set, cm("probe", "1"), cm("older", "new")); err != nil {
		t.Fatalf("an object of the set made by an older Lariat: %v", err)
	}
	if got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "older", metav1.GetOptions{}); err != nil || got.Data["v"] != "new" {
		t.Fatalf("the older object was not applied: %v %v", got, err)
	}
	if err := a.Apply(ctx, set, cm("probe", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "older", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the older object was not pruned: %v", err)
	}
}

// Set.TakeOver moves objects between the owner's sets; it does not take an
// object no set holds.
func TestTakeOverDoesNotTakeUnmanagedObjects(t *testing.T) {
	a, kube, ns, owner := setup(t)
	made := handMadeCM(t, kube, ns, "handmade", nil)
	err := a.Apply(t.Context(), apply.Set{Owner: owner, ID: "new-name", TakeOver: []string{"old-name"}}, cm("handmade", "set"))
	if notManaged(err, "handmade") == nil {
		t.Fatalf("TakeOver naming a hand-made object: %v, want a *apply.NotManagedError", err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), "handmade", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unchanged(t, "the hand-made ConfigMap", made, got)
}
