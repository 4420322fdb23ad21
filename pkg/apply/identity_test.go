package apply_test

import (
	"strings"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// A child moving from autoscaling/v1 to autoscaling/v2 is the same object:
// the set's identity is group, kind, namespace and name, so the old version's
// listing must not prune what the new version just applied.
func TestVersionChangeKeepsObject(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "hpa"}
	target := autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	v1 := &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: target, MaxReplicas: 3},
	}
	if err := a.Apply(ctx, set, v1); err != nil {
		t.Fatal(err)
	}
	v2 := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](1),
			MaxReplicas:    5,
		},
	}
	if err := a.Apply(ctx, set, v2); err != nil {
		t.Fatal(err)
	}
	got, err := kube.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the HPA applied as autoscaling/v2 is gone after the move from v1: %v", err)
	}
	if got.Spec.MaxReplicas != 5 {
		t.Fatalf("maxReplicas %d, want 5", got.Spec.MaxReplicas)
	}
	// And back: still one object, still there.
	if err := a.Apply(ctx, set, v1); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Fatalf("the HPA applied as autoscaling/v1 is gone after the move back: %v", err)
	}
	// Dropping the kind still prunes it, through whichever version.
	if err := a.Apply(ctx, set, cm("only", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the HPA that left the set was not pruned: %v", err)
	}
}

// The set is the same whichever version its owner was read through.
func TestOwnerVersionDoesNotChangeSet(t *testing.T) {
	a, kube, ns, _ := setup(t)
	ctx := t.Context()
	created, asV1 := hpaOwner(t, kube, ns)
	if err := a.Apply(ctx, apply.Set{Owner: created, ID: "x"}, cm("child-a", "1"), cm("child-b", "1")); err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, apply.Set{Owner: asV1, ID: "x"}, cm("child-a", "2")); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "child-b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("child-b should be pruned by the same set read through autoscaling/v1: %v", err)
	}
}

// Inventories written before identities dropped the version list kinds as
// "group/version/Kind"; they still say which kinds to prune.
func TestLegacyInventoryLines(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "legacy"}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"k": "v"}}
	if err := a.Apply(ctx, set, cm("a", "1"), secret); err != nil {
		t.Fatal(err)
	}
	hash := hashOf(t, kube, ns, "a")
	inv, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "lariat-set-"+hash[:20], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inv.Data["kinds"] = "/v1/ConfigMap\n/v1/Secret"
	if _, err := kube.CoreV1().ConfigMaps(ns).Update(ctx, inv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, set, cm("a", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Secrets(ns).Get(ctx, "s", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a Secret named by a legacy inventory line was not pruned: %v", err)
	}
	inv, err = kube.CoreV1().ConfigMaps(ns).Get(ctx, "lariat-set-"+hash[:20], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(inv.Data["kinds"], "/v1/") {
		t.Fatalf("inventory still lists versions: %q", inv.Data["kinds"])
	}
}
