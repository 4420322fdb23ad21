package operator

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// invalidNodePort is the API server's refusal of a Service's node port.
func invalidNodePort(name string, port int32, detail string) error {
	path := field.NewPath("spec", "ports").Index(0).Child("nodePort")
	return errors.NewInvalid(schema.GroupKind{Kind: "Service"}, name, field.ErrorList{field.Invalid(path, port, detail)})
}

// TestRefusedNodePortMatchesOnlyAnAllocatedPort: only a failed Service
// whose node port the API server holds is a PortRefused; a port out of
// range, another field, another kind or a value not failed is not.
func TestRefusedNodePortMatchesOnlyAnAllocatedPort(t *testing.T) {
	svc, dep := ServiceKey("ns", "web"), DeploymentKey("ns", "web")
	held := invalidNodePort("web", 30000, errPortAllocated)
	other := errors.NewInvalid(schema.GroupKind{Kind: "Service"}, "web",
		field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIP"), "10.0.0.1", errPortAllocated)})
	for _, tc := range []struct {
		what string
		st   kvscheduler.ValueStatus
		want int32 // 0: no match
	}{
		{"failed, port held", kvscheduler.ValueStatus{Key: svc, State: kvscheduler.Failed, Error: held}, 30000},
		{"retrying, wrapped", kvscheduler.ValueStatus{Key: svc, State: kvscheduler.Retrying, Error: fmt.Errorf("apply: %w", held)}, 30000},
		{"out of range", kvscheduler.ValueStatus{Key: svc, State: kvscheduler.Failed,
			Error: invalidNodePort("web", 1, "provided port is not in the valid range")}, 0},
		{"another field", kvscheduler.ValueStatus{Key: svc, State: kvscheduler.Failed, Error: other}, 0},
		{"a Deployment", kvscheduler.ValueStatus{Key: dep, State: kvscheduler.Failed, Error: held}, 0},
		{"configured", kvscheduler.ValueStatus{Key: svc, State: kvscheduler.Configured, Error: held}, 0},
		{"plain error", kvscheduler.ValueStatus{Key: svc, State: kvscheduler.Failed, Error: fmt.Errorf("%s", held.Error())}, 0},
	} {
		r, ok := refusedNodePort(tc.st)
		switch {
		case tc.want == 0 && ok:
			t.Errorf("%s: matched as %v", tc.what, r)
		case tc.want != 0 && !ok:
			t.Errorf("%s: not matched", tc.what)
		case ok && (r.App != "ns/web" || r.Port != tc.want):
			t.Errorf("%s: got %s, want ns/web port %d", tc.what, r, tc.want)
		}
	}
}

// TestARefusedPortIsLeftUntilTheNextResync: a WebApp whose port the API
// server refused gets another, the refused port goes to no other WebApp,
// a stale refusal moves nothing, and a full resync forgets the refusal.
func TestARefusedPortIsLeftUntilTheNextResync(t *testing.T) {
	h := newHarness(t, PortRange{First: 30000, Last: 30002}, kubebridge.State{})
	h.push(changed(nil, webApp("a", 1)))
	if p := h.nodePort("a"); p != 30000 {
		t.Fatalf("a has port %d, want 30000", p)
	}
	h.push(&PortRefused{App: "ns/a", Port: 30000})
	if p := h.nodePort("a"); p != 30001 {
		t.Fatalf("after 30000 was refused a has port %d, want 30001", p)
	}
	h.push(changed(nil, webApp("b", 1)))
	if p := h.nodePort("b"); p != 30002 {
		t.Fatalf("b has port %d, want 30002 (30000 refused, 30001 a's)", p)
	}
	h.push(&PortRefused{App: "ns/a", Port: 30000}) // stale: a left 30000
	if pa, pb := h.nodePort("a"), h.nodePort("b"); pa != 30001 || pb != 30002 {
		t.Fatalf("a stale refusal moved a to %d and b to %d", pa, pb)
	}
	h.push(&kubebridge.KubeResync{State: kubebridge.State{webAppResource: {"ns/c": webApp("c", 1)}}})
	h.push(changed(nil, webApp("d", 1))) // push waits for it, so for the resync before it
	if p := h.nodePort("c"); p != 30000 {
		t.Fatalf("after a resync c has port %d, want 30000 again", p)
	}
}
