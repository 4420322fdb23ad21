package shard_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// TestGateMetricsCountWhatTheGateDid: a member handles two objects, is
// asked to drain one, has another moved away directly and one deleted. Its
// gate metrics, read from the registry its term registered them with, say
// what its gate did: every pass it let through, the drain it refused and
// acknowledged, the moved object it refused once its cache dropped it. When
// the term ends they leave the registry.
func TestGateMetricsCountWhatTheGateDid(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	a := startMember(t, ns, "a", memberOpts{})
	for _, name := range []string{"kept", "drained", "moved", "deleted"} {
		createCM(t, ns, name, a.id())
		eventually(t, "a handling "+name, func() bool { return len(a.callsFor(ns+"/"+name)) > 0 })
	}
	label(t, ns, "drained", a.id(), true)
	eventually(t, "the drain acknowledged", func() bool {
		cm, err := cms(ns).Get(t.Context(), "drained", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cm.Labels[shard.AssignmentLabel(ringName)] == ""
	})
	label(t, ns, "moved", shard.MemberID("b"), false)
	eventually(t, "a gate pass for the moved object once a's cache dropped it", func() bool {
		for _, p := range a.passesFor(ns + "/moved") {
			if !p.cached && p.err == nil {
				return true
			}
		}
		return false
	})
	if err := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns).Delete(t.Context(), "deleted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a handling the deletion", func() bool { return a.sawDeleted(ns + "/deleted") })

	labels := map[string]string{"ring": ringName, "member": a.id(), "gvk": "v1/ConfigMap"}
	with := func(k, v string) map[string]string {
		out := map[string]string{k: v}
		for k, v := range labels {
			out[k] = v
		}
		return out
	}
	var admitted float64
	a.mu.Lock()
	for _, p := range a.passes {
		if p.handle {
			admitted++
		}
	}
	a.mu.Unlock()
	if got := shard.MetricSum(t, a.metrics, "lariat_shard_gate_admitted_total", labels); got != admitted || admitted < 5 {
		t.Errorf("lariat_shard_gate_admitted_total = %v; the gate let %v passes through (want at least the 4 objects and the deletion)", got, admitted)
	}
	if got := shard.MetricSum(t, a.metrics, "lariat_shard_gate_drains_acknowledged_total", labels); got != 1 {
		t.Errorf("lariat_shard_gate_drains_acknowledged_total = %v, want 1", got)
	}
	if got := shard.MetricSum(t, a.metrics, "lariat_shard_gate_refused_total", with("reason", "draining")); got < 1 {
		t.Errorf("lariat_shard_gate_refused_total{reason=draining} = %v, want at least 1", got)
	}
	if got := shard.MetricSum(t, a.metrics, "lariat_shard_gate_refused_total", with("reason", "uncached")); got < 1 {
		t.Errorf("lariat_shard_gate_refused_total{reason=uncached} = %v, want at least 1 (the moved object)", got)
	}

	a.cancel()
	if err := <-a.done; err != nil {
		t.Fatal(err)
	}
	a.done <- nil
	if got := shard.MetricSum(t, a.metrics, "lariat_shard_gate_admitted_total", labels); got != -1 {
		t.Errorf("the gate metrics of a's ended term are still registered (admitted %v)", got)
	}
}
