package shard

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv14RingGuardIsEnforcedWhenInstallReturns: the sharder campaigns
// once InstallRingPolicy returned; from then on a user's write of the
// ring's labels must be refused, at the first try. A policy the API server
// stores is enforced only once its informers have it, so InstallRingPolicy
// proves it (its probe) before it returns. Before, it returned as soon as
// the objects were stored, and a user's create carrying the ring's label,
// sent at once, was admitted: an object handed to a member by hand in the
// window the sharder already ran in. Five fresh rings in a row.
func TestAdv14RingGuardIsEnforcedWhenInstallReturns(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	user := adv11UserClient(cfg).CoreV1().ConfigMaps(ns)
	for i := range 5 {
		ring := Ring{Name: fmt.Sprintf("advenforced%d", i), Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
		if err := installRingPolicy(t.Context(), kube, ring, []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")},
			RingPolicyOptions{Namespace: ns}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, c := context.Background(), kube.AdmissionregistrationV1()
			_ = c.ValidatingAdmissionPolicyBindings().Delete(ctx, RingPolicyName(ring), metav1.DeleteOptions{})
			_ = c.ValidatingAdmissionPolicies().Delete(ctx, RingPolicyName(ring), metav1.DeleteOptions{})
		})
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("handed-%d", i), Labels: map[string]string{AssignmentLabel(ring.Name): "b"}}}
		_, err := user.Create(t.Context(), cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if !adv11RefusedByGuard(err, ring) {
			t.Fatalf("ring %s: a user's create carrying the ring's label, sent as InstallRingPolicy returned: %v, want refused by the guard", ring.Name, err)
		}
	}
	// The probes were dry runs: no Lease stored.
	leases, err := kube.CoordinationV1().Leases(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases.Items {
		if strings.HasPrefix(l.Name, "ring-guard-probe-") {
			t.Errorf("Lease %s stored by a probe, want none (a dry run)", l.Name)
		}
	}
}

// TestAdv14RingGuardOnAnAPIServerThatDoesNotEnforceItIsAnError: an API
// server whose ValidatingAdmissionPolicy admission plugin is disabled
// serves the API and stores the guard, which then refuses nothing. Before,
// InstallRingPolicy and the sharder's Run went on as if guarded. Now both
// fail, wrapping ErrRingGuardNotEnforced, and the sharder does not
// campaign.
func TestAdv14RingGuardOnAnAPIServerThatDoesNotEnforceItIsAnError(t *testing.T) {
	own := controlplanetest.Start(t, controlplane.Options{APIServerFlags: []string{"--disable-admission-plugins=ValidatingAdmissionPolicy"}})
	cfg := own.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: "advunenforced", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	opts := RingPolicyOptions{Namespace: ns, EnforcementWait: 3 * time.Second}
	err := installRingPolicy(t.Context(), kube, ring, []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")}, opts)
	if !errors.Is(err, ErrRingGuardNotEnforced) || !strings.Contains(err.Error(), "admission plugin") {
		t.Fatalf("InstallRingPolicy on an API server without the admission plugin: %v, want an error wrapping ErrRingGuardNotEnforced", err)
	}
	s, err := NewSharder(cfg, ring, SharderOptions{Namespace: ns, RingPolicy: &opts,
		Leader: []leader.Option{leader.WithIdentity("sharder")}, Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := s.Run(ctx); !errors.Is(err, ErrRingGuardNotEnforced) {
		t.Fatalf("the sharder's Run on an API server without the admission plugin: %v, want an error wrapping ErrRingGuardNotEnforced", err)
	}
	if _, err := kube.CoordinationV1().Leases(ns).Get(t.Context(), SharderLeaseName(ring.Name), metav1.GetOptions{}); err == nil {
		t.Fatal("the sharder campaigned (its Lease exists) although its ring guard is not enforced")
	}
}
