package shard

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// adv11GuardEnforced waits until the ring guard of ring refuses a user's
// dry-run create of a ConfigMap carrying the ring's assignment label.
func adv11GuardEnforced(t *testing.T, ring Ring) {
	t.Helper()
	user := adv11UserClient(cp.Config()).CoreV1().ConfigMaps(ring.Namespace)
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "guard-probe", Labels: map[string]string{AssignmentLabel(ring.Name): "someone"}}}
	controlplanetest.Eventually(t, time.Minute, "the ring guard refuses a user's create carrying the ring's label", func() bool {
		_, err := user.Create(t.Context(), probe.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return adv11RefusedByGuard(err, ring)
	})
}

// TestAdv11RingGuardLetsTheOperatorsWritesThrough: with the ring guard
// installed and enforced (by the sharder, SharderOptions.RingPolicy, on
// top of adv11Guard's), every write of the protocol passes it: the
// sharder's assignments and drains, the gates' claims (trail) and
// releases. Objects created by a user without the ring's labels are
// assigned to member A and handled there; once member B joins, the
// objects Pick gives B drain from A and are handled by B, their trail
// naming B. Were any of those writes refused, the objects would stay
// unassigned or on A, and the waits fail.
func TestAdv11RingGuardLetsTheOperatorsWritesThrough(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: "advguard", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	adv11Guard(t, ring)
	adv11GuardEnforced(t, ring)
	timings := []leader.Option{leader.WithLeaseDuration(60 * time.Second), leader.WithRenewDeadline(50 * time.Second), leader.WithRetryPeriod(250 * time.Millisecond)}
	spans := &advSpans{release: make(chan struct{})}
	a := advMember(t, ring, "a", kube.CoordinationV1(), spans, timings, false)
	s, err := NewSharder(cfg, ring, SharderOptions{Namespace: ns, RingPolicy: &RingPolicyOptions{},
		Leader: []leader.Option{leader.WithIdentity("sharder")}, Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Run(t, s.Run)
	user := adv11UserClient(cfg).CoreV1().ConfigMaps(ns)
	const n = 8
	for i := range n {
		if _, err := user.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("a user's create without the ring's labels: %v", err)
		}
	}
	placed := func(want func(name string) string) func() bool {
		return func() bool {
			for i := range n {
				name := fmt.Sprintf("cm%d", i)
				cm, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				id := want(name)
				label := map[string]string{a.ID(): "a"}[id]
				if label == "" {
					label = "b"
				}
				if _, ran := spans.find(label, name, false); !ran || cm.Labels[AssignmentLabel(ring.Name)] != id ||
					cm.Annotations[TrailAnnotation(ring.Name)] != id {
					return false
				}
			}
			return true
		}
	}
	controlplanetest.Eventually(t, 2*time.Minute, "every object assigned to A, trailed A and handled by A", placed(func(string) string { return a.ID() }))
	b := advMember(t, ring, "b", kube.CoordinationV1(), spans, timings, false)
	members := []string{a.ID(), b.ID()}
	moved := 0
	for i := range n {
		if Pick(ns+"/"+fmt.Sprintf("cm%d", i), members) == b.ID() {
			moved++
		}
	}
	if moved == 0 {
		t.Fatalf("no object of %d is Pick'ed for B: the test proves no move", n)
	}
	controlplanetest.Eventually(t, 2*time.Minute, "the objects Pick gives B drained from A, assigned, trailed and handled by B",
		placed(func(name string) string { return Pick(ns+"/"+name, members) }))
}

// TestAdv11RingGuardLetsUsersOtherEditsThrough: the ring guard refuses
// only what changes the ring's labels and trail. A user (not the
// operator) may update a sharded object's other labels, annotations and
// data, patch them, and delete the object; the same user's update that
// adds the drain label, or a create carrying the trail, is refused with
// the guard's message.
func TestAdv11RingGuardLetsUsersOtherEditsThrough(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: "advguardedit", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	// The guard of the resources given, as RingPolicy builds it for an
	// installer without a mapper.
	p, b, err := RingPolicy(ring, []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")}, []string{"someone-else", adv11OperatorUser(t)}, ns)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != RingPolicyName(ring) || b.Spec.PolicyName != p.Name {
		t.Fatalf("RingPolicy named %s and bound %s, want %s", p.Name, b.Spec.PolicyName, RingPolicyName(ring))
	}
	adv11Guard(t, ring)
	adv11GuardEnforced(t, ring)
	ctx := t.Context()
	// The operator's object: labelled and trailed as the protocol leaves it.
	x, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x",
		Labels:      map[string]string{AssignmentLabel(ring.Name): "m1"},
		Annotations: map[string]string{TrailAnnotation(ring.Name): "m1"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	user := adv11UserClient(cfg).CoreV1().ConfigMaps(ns)
	x.Labels["app"] = "web"
	x.Annotations["note"] = "edited by a user"
	x.Data = map[string]string{"k": "v"}
	if x, err = user.Update(ctx, x, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("a user's update of other labels, annotations and data: %v", err)
	}
	if _, err = user.Patch(ctx, "x", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"app":"db"},"annotations":{"note":null}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("a user's merge patch of other labels and annotations: %v", err)
	}
	if x, err = kube.CoreV1().ConfigMaps(ns).Get(ctx, "x", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	x.Labels[DrainLabel(ring.Name)] = "true"
	if _, err := user.Update(ctx, x, metav1.UpdateOptions{}); !adv11RefusedByGuard(err, ring) {
		t.Fatalf("a user's update adding the drain label: %v, want refused by the ring guard", err)
	}
	y := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "y", Annotations: map[string]string{TrailAnnotation(ring.Name): "released:m1@1"}}}
	if _, err := user.Create(ctx, y, metav1.CreateOptions{}); !adv11RefusedByGuard(err, ring) {
		t.Fatalf("a user's create carrying the trail: %v, want refused by the ring guard", err)
	}
	if err := user.Delete(ctx, "x", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("a user's delete of a sharded object: %v", err)
	}
}

// adv11OperatorUser returns the user cp.Config() authenticates as.
func adv11OperatorUser(t *testing.T) string {
	t.Helper()
	u, err := whoAmI(t.Context(), controlplanetest.Clientset(cp.Config()))
	if err != nil {
		t.Fatal(err)
	}
	return u
}
