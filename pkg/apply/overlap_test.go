package apply_test

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// Two sets (here of two owners) whose desired objects overlap on one child:
// the set that does not hold the child is refused, with an error naming the
// set that holds it. It neither overwrites the child (its field manager is
// the same, so its apply would drop the fields and the owner reference only
// the other set applies) nor takes it into its own set, where its pruning
// would delete it while the other set still wants it.
func TestOverlappingSetsDoNotTakeEachOthersObjects(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	owner2, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cm("owner2", ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first := apply.Set{Owner: owner, ID: "kids"}
	second := apply.Set{Owner: owner2, ID: "kids"}
	shared := cm("shared", "1")
	shared.Data["first-only"] = "kept"
	if err := a.Apply(ctx, first, shared); err != nil {
		t.Fatal(err)
	}

	plan, err := a.DryRun(ctx, second, cm("shared", "1"))
	var claimed *apply.ClaimedError
	if !errors.As(err, &claimed) {
		t.Errorf("dry run of a set naming another set's object: %v (plan %+v), want a *apply.ClaimedError", err, plan)
	}
	err = a.Apply(ctx, second, cm("shared", "1"), cm("second-own", "1"))
	if !errors.As(err, &claimed) {
		t.Errorf("apply of a set naming another set's object: %v, want a *apply.ClaimedError", err)
	} else if claimed.SetID != "kids" || !strings.Contains(claimed.Owner, ns+"/owner") || claimed.Object.Name != "shared" {
		t.Errorf("the refusal names %+v, want set kids of %s/owner and object shared", claimed, ns)
	} else if !strings.Contains(err.Error(), ns+"/owner") {
		t.Errorf("the error does not name the holding set's owner: %v", err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "shared", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Data["first-only"] != "kept" {
		t.Errorf("the other set's apply removed a field the holding set applied: %v", got.Data)
	}
	if refs := got.OwnerReferences; len(refs) == 0 || refs[0].UID != owner.UID {
		t.Errorf("the other set's apply removed the holding owner's reference: %+v", refs)
	}
	// The rest of the refused set was still applied.
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "second-own", metav1.GetOptions{}); err != nil {
		t.Errorf("the refused set's own object was not applied: %v", err)
	}

	// The second set stops naming the child: its pruning must not delete
	// what the first set still wants.
	if err := a.Apply(ctx, second, cm("second-own", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "shared", metav1.GetOptions{}); err != nil {
		t.Fatalf("a set pruned a child another set still wants: %v", err)
	}
	// The holding set still owns it: it prunes it when it stops naming it.
	if err := a.Apply(ctx, first); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "shared", metav1.GetOptions{}); err == nil {
		t.Fatal("the holding set could not prune its own child")
	}
}

// Set.TakeOver moves objects from named sets of the same owner (a renamed
// generating handler) into the set, which then owns and prunes them; the
// old set's pruning no longer sees them.
func TestTakeOverMovesObjectsFromNamedSets(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	old := apply.Set{Owner: owner, ID: "old-name"}
	if err := a.Apply(ctx, old, cm("child", "1")); err != nil {
		t.Fatal(err)
	}
	renamed := apply.Set{Owner: owner, ID: "new-name"}
	var claimed *apply.ClaimedError
	if err := a.Apply(ctx, renamed, cm("child", "2")); !errors.As(err, &claimed) {
		t.Fatalf("apply without TakeOver: %v, want a *apply.ClaimedError", err)
	}
	renamed.TakeOver = []string{"old-name"}
	if err := a.Apply(ctx, renamed, cm("child", "2")); err != nil {
		t.Fatal(err)
	}
	// The old set, pruned whole, leaves the moved child alone.
	if err := a.Apply(ctx, old); err != nil {
		t.Fatal(err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "child", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the old set pruned the child taken over: %v", err)
	}
	if got.Data["v"] != "2" || got.Annotations[apply.AnnotationSetID] != "new-name" {
		t.Fatalf("the child was not taken over: %v %v", got.Data, got.Annotations)
	}
	if err := a.Apply(ctx, renamed); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "child", metav1.GetOptions{}); err == nil {
		t.Fatal("the set that took the child over could not prune it")
	}
}

// An object labelled with the legacy hash its set had when its owner was
// read through another version (before the hash left the version out) is
// still the set's own: its annotations name the same owner, whatever the
// version, and the same set ID. It is applied, not refused as another set's.
func TestLegacyHashOfAnotherOwnerVersionIsTheSameSet(t *testing.T) {
	a, kube, ns, _ := setup(t)
	ctx := t.Context()
	hpa, asV1 := hpaOwner(t, kube, ns)
	desc := "autoscaling/v2/HorizontalPodAutoscaler " + ns + "/" + hpa.Name
	child := cm("child", "1")
	child.Labels = map[string]string{apply.LabelSet: legacyHash(desc, "x")}
	child.Annotations = map[string]string{apply.AnnotationOwner: desc, apply.AnnotationSetID: "x"}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, child, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, apply.Set{Owner: asV1, ID: "x"}, cm("child", "2")); err != nil {
		t.Fatalf("the set's own object, under the legacy hash of another owner version: %v", err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "child", metav1.GetOptions{})
	if err != nil || got.Data["v"] != "2" {
		t.Fatalf("the set's own object was not applied: %v %v", got.Data, err)
	}
}

// A desired ConfigMap named like another set's inventory is refused: the
// inventory is that set's record of where its objects are, and applying
// over it (same field manager) would drop it, orphaning the set's objects.
func TestDesiredObjectNamedLikeAnInventoryIsRefused(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	if err := a.Apply(ctx, apply.Set{Owner: owner, ID: "kids"}, cm("kid", "1")); err != nil {
		t.Fatal(err)
	}
	list, err := kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: apply.LabelInventory})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("the set's inventory: %v %v", list, err)
	}
	inv := list.Items[0]
	err = a.Apply(ctx, apply.Set{ID: "ownerless"}, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: inv.Name, Namespace: ns}})
	var claimed *apply.ClaimedError
	if !errors.As(err, &claimed) || claimed.SetID != "kids" {
		t.Errorf("apply over another set's inventory: %v, want a *apply.ClaimedError naming set kids", err)
	}
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, inv.Name, metav1.GetOptions{})
	if err != nil || got.Data["kinds"] != inv.Data["kinds"] {
		t.Fatalf("the inventory was applied over: %v %v", got.Data, err)
	}
}
