package shard

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv11RingGuardWithoutPermissionIsAClearError: an operator whose
// identity may not write admission policies is told so, by name of the
// verbs and resources, by InstallRingPolicy and by the sharder's Run
// (SharderOptions.RingPolicy), which returns before campaigning: the guard
// is never skipped silently.
func TestAdv11RingGuardWithoutPermissionIsAClearError(t *testing.T) {
	cfg := rest.CopyConfig(cp.Config())
	ns := controlplanetest.Namespace(t, cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "adv11-no-admission-rights", Groups: []string{"system:authenticated"}}
	ring := Ring{Name: "advguardrbac", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	const want = "needs patch and create on validatingadmissionpolicies and validatingadmissionpolicybindings"
	err := installRingPolicy(t.Context(), controlplanetest.Clientset(cfg), ring,
		[]schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")}, RingPolicyOptions{Namespace: ns})
	if err == nil || !strings.Contains(err.Error(), want) || !apierrors.IsForbidden(err) {
		t.Fatalf("InstallRingPolicy without the rights: %v, want a Forbidden error saying it %s", err, want)
	}
	s, err := NewSharder(cfg, ring, SharderOptions{Namespace: ns, RingPolicy: &RingPolicyOptions{},
		Leader: []leader.Option{leader.WithIdentity("sharder")}, Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := s.Run(ctx); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("the sharder's Run without the rights: %v, want an error saying it %s", err, want)
	}
	if _, err := controlplanetest.Clientset(cp.Config()).CoordinationV1().Leases(ns).Get(t.Context(), SharderLeaseName(ring.Name), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the sharder's Lease after a refused install: %v, want none (Run returns before campaigning)", err)
	}
}

// TestAdv11RingGuardAllowsOperatorsOfAnyName: the operator's usernames
// go into the policy's expression as CEL string literals; names with
// quotes, backslashes, ':' and non-ASCII letters are written so that the
// API server accepts the policy and lets exactly that user through (its
// write of the ring's label passes) while another user's is refused.
func TestAdv11RingGuardAllowsOperatorsOfAnyName(t *testing.T) {
	cfg := cp.Config()
	admin := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: "advguardnames", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	odd := `system:serviceaccount:op:we"ird\name-ü'`
	err := installRingPolicy(t.Context(), admin, ring, []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")},
		RingPolicyOptions{Namespace: ns, Users: []string{odd, adv11OperatorUser(t)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c := admin.AdmissionregistrationV1()
		_ = c.ValidatingAdmissionPolicyBindings().Delete(context.Background(), RingPolicyName(ring), metav1.DeleteOptions{})
		_ = c.ValidatingAdmissionPolicies().Delete(context.Background(), RingPolicyName(ring), metav1.DeleteOptions{})
	})
	adv11GuardEnforced(t, ring)
	oc := rest.CopyConfig(cfg)
	oc.Impersonate = rest.ImpersonationConfig{UserName: odd, Groups: []string{"system:masters", "system:authenticated"}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{AssignmentLabel(ring.Name): "m1"}}}
	if _, err := controlplanetest.Clientset(oc).CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the create of operator %q carrying the ring's label: %v, want admitted", odd, err)
	}
	if _, _, err := RingPolicy(ring, []schema.GroupVersionResource{{Resource: "configmaps", Version: "v1"}}, []string{"bad\xff"}, ""); err == nil {
		t.Fatal("RingPolicy took a username that is not UTF-8")
	}
	for _, c := range []struct {
		res   []schema.GroupVersionResource
		users []string
	}{{nil, []string{"u"}}, {[]schema.GroupVersionResource{{Resource: "configmaps", Version: "v1"}}, nil}} {
		if _, _, err := RingPolicy(ring, c.res, c.users, ""); err == nil {
			t.Fatalf("RingPolicy of resources %v and users %v: no error", c.res, c.users)
		}
	}
	unsupported := ringPolicyError(ring, "ValidatingAdmissionPolicy", "p", apierrors.NewNotFound(schema.GroupResource{}, "p"))
	if !errors.Is(unsupported, ErrRingPolicyUnsupported) {
		t.Fatalf("a NotFound apply: %v, want ErrRingPolicyUnsupported", unsupported)
	}
}
