package shard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
)

// Proving the ring guard enforced. A policy and binding the API server
// stores are not yet a guard: they refuse nothing until its informers have
// them (usually within a second), and nothing on an API server whose
// ValidatingAdmissionPolicy admission plugin is disabled (a hardened or
// managed control plane's --enable-admission-plugins without it). Nothing
// the API server serves says which plugins run, so InstallRingPolicy asks
// what it would do: the guard also refuses, from anyone (the operator
// too), any object carrying the ring's probe annotation, and a dry-run
// create of a Lease carrying it (nothing is stored) must be refused
// before the sharder goes on. Leases, because the operator may create
// them where its ring lives (its members' and its sharder's Leases); a
// match condition keeps every other Lease write (node heartbeats, the
// members' renewals) from being evaluated at all.

// DefaultRingGuardEnforcementWait is how long InstallRingPolicy asks again
// while the API server admits the probe (RingPolicyOptions.EnforcementWait).
const DefaultRingGuardEnforcementWait = time.Minute

// ErrRingGuardNotEnforced is wrapped by InstallRingPolicy's error when the
// API server still admitted the probe after the wait: the guard is
// installed but refuses nothing (its ValidatingAdmissionPolicy admission
// plugin is not enabled, see kube-apiserver's --enable-admission-plugins
// and --disable-admission-plugins).
var ErrRingGuardNotEnforced = errors.New("the API server does not enforce the ring guard: a dry-run create it must refuse was admitted " +
	"(is its ValidatingAdmissionPolicy admission plugin enabled? see kube-apiserver's --enable-admission-plugins and --disable-admission-plugins)")

// RingGuardProbeAnnotation returns the annotation the ring guard of ring
// refuses on any object, from anyone: its probe's.
func RingGuardProbeAnnotation(ring string) string { return "probe.shard.lariat.dev/" + ring }

// ringProbeMessage is what the guard answers its probe.
func ringProbeMessage(ring Ring) string {
	return fmt.Sprintf("%s is the ring guard's probe of ring %s (lariat.dev ring guard): refused from anyone", RingGuardProbeAnnotation(ring.Name), ring.Name)
}

// ringProbed is the CEL expression: the object written carries the probe
// annotation.
func ringProbed(ring Ring) string {
	return fmt.Sprintf("object != null && has(object.metadata.annotations) && '%s' in object.metadata.annotations",
		RingGuardProbeAnnotation(ring.Name))
}

// probeNamespace is where the probe is sent: the guarded namespace, or
// the ring's.
func probeNamespace(ring Ring, guarded string) string {
	if guarded != "" {
		return guarded
	}
	return ring.Namespace
}

// ringProbeMatch adds Leases to rules, for the probe, and returns the
// match conditions that keep the guard to what it guards: only the probe
// among Leases (unless Leases are a ring kind), and, with namespace, only
// namespace's objects and cluster-scoped ones. The namespace is a
// condition rather than a namespace selector so that it needs no label
// on the namespace and holds the probe the same way.
func ringProbeMatch(ring Ring, resources []schema.GroupVersionResource, rules []admissionv1.NamedRuleWithOperations,
	namespace string) ([]admissionv1.NamedRuleWithOperations, []admissionv1.MatchCondition) {
	var conds []admissionv1.MatchCondition
	if namespace != "" {
		conds = append(conds, admissionv1.MatchCondition{Name: "guarded-namespace",
			Expression: fmt.Sprintf("request.namespace == '' || request.namespace == '%s'", namespace)})
	}
	for _, r := range resources {
		if r.Group == "coordination.k8s.io" && r.Resource == "leases" {
			return rules, conds // Leases are guarded: the probe is one of them
		}
	}
	rules = append(rules, admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{
		Operations: []admissionv1.OperationType{admissionv1.Create},
		Rule:       admissionv1.Rule{APIGroups: []string{"coordination.k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"leases"}},
	}})
	conds = append(conds, admissionv1.MatchCondition{Name: "leases-probe-only",
		Expression: "!(request.resource.group == 'coordination.k8s.io' && request.resource.resource == 'leases') || (" + ringProbed(ring) + ")"})
	return rules, conds
}

// probeRingPolicy sends the probe, a dry-run create of a Lease in
// namespace carrying the probe annotation, until the ring guard refuses
// it, wait (DefaultRingGuardEnforcementWait when zero) passed, or ctx
// ended.
func probeRingPolicy(ctx context.Context, kube kubernetes.Interface, ring Ring, namespace string, wait time.Duration) error {
	if wait <= 0 {
		wait = DefaultRingGuardEnforcementWait
	}
	body, err := json.Marshal(map[string]any{
		"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
		"metadata": map[string]any{"generateName": "ring-guard-probe-", "annotations": map[string]string{RingGuardProbeAnnotation(ring.Name): "probe"}},
	})
	if err != nil {
		return err
	}
	deadline := time.Now().Add(wait)
	backoff := 50 * time.Millisecond
	for {
		err := kube.CoordinationV1().RESTClient().Post().Namespace(namespace).Resource("leases").
			Param("dryRun", "All").SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
		switch {
		case err != nil && strings.Contains(err.Error(), ringProbeMessage(ring)):
			return nil
		case err != nil && ctx.Err() != nil:
			return fmt.Errorf("shard: ring %s: prove the ring guard enforced: %w", ring.Name, ctx.Err())
		case err != nil:
			if apierrors.IsForbidden(err) {
				err = fmt.Errorf("the operator needs create on leases in %s (a dry run, nothing is stored): %w", namespace, err)
			}
			return fmt.Errorf("shard: ring %s: prove the ring guard %s enforced (a dry-run create of a Lease in %s): %w",
				ring.Name, RingPolicyName(ring), namespace, err)
		case !time.Now().Before(deadline):
			return fmt.Errorf("shard: ring %s: ring guard %s: %w (a Lease carrying %s was admitted for %v)",
				ring.Name, RingPolicyName(ring), ErrRingGuardNotEnforced, RingGuardProbeAnnotation(ring.Name), wait)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("shard: ring %s: prove the ring guard enforced: %w", ring.Name, ctx.Err())
		case <-t.C:
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}
