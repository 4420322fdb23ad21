package operator

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// PortRefused is the event the operator pushes when the API server refused
// a WebApp's Service because its node port is already allocated. The port
// allocator knows only the ports of the operator's own Services; the API
// server also holds ports of other Services, and, for minutes, the port of
// a Service whose create was cut short (a leader's term ending mid-create).
// Retrying the same port would fail for ever, so the allocator leaves it
// and gives the WebApp another one.
type PortRefused struct {
	// App is the WebApp, "namespace/name".
	App string
	// Port is the node port refused; 0 if the error did not say.
	Port int32
}

var _ eventloop.UpdateEvent = (*PortRefused)(nil)

// GetName implements eventloop.Event.
func (r *PortRefused) GetName() string { return "PortRefused" }

// String implements eventloop.Event.
func (r *PortRefused) String() string {
	return fmt.Sprintf("PortRefused (%s, node port %d already allocated)", r.App, r.Port)
}

// Method implements eventloop.Event.
func (r *PortRefused) Method() eventloop.EventMethodType { return eventloop.Update }

// IsBlocking implements eventloop.Event.
func (r *PortRefused) IsBlocking() bool { return false }

// TransactionType implements eventloop.UpdateEvent.
func (r *PortRefused) TransactionType() eventloop.UpdateTransactionType { return eventloop.BestEffort }

// Direction implements eventloop.UpdateEvent.
func (r *PortRefused) Direction() eventloop.UpdateDirectionType { return eventloop.Forward }

// Done implements eventloop.Event.
func (r *PortRefused) Done(error) {}

// nodePortField is the field of a Service's node port in the API server's
// validation errors.
var nodePortField = regexp.MustCompile(`^spec\.ports\[\d+\]\.nodePort$`)

// errPortAllocated is the detail of the API server's refusal of a node
// port another Service (or a create cut short) holds, from the allocator
// of k8s.io/kubernetes (portallocator.ErrAllocated).
const errPortAllocated = "provided port is already allocated"

// refusedNodePort tells whether st is a WebApp's Service the API server
// refused because its node port is already allocated, and for which
// WebApp and port. The error is matched by its structure, an Invalid
// status with a FieldValueInvalid cause on spec.ports[*].nodePort, and the
// allocator's detail, which tells "held" from "out of range".
func refusedNodePort(st kvscheduler.ValueStatus) (*PortRefused, bool) {
	if st.State != kvscheduler.Failed && st.State != kvscheduler.Retrying || st.Error == nil {
		return nil, false
	}
	ns, name, ok := appOfKey(st.Key)
	if !ok || st.Key != ServiceKey(ns, name) || !apierrors.IsInvalid(st.Error) {
		return nil, false
	}
	var status apierrors.APIStatus
	if !errors.As(st.Error, &status) || status.Status().Details == nil {
		return nil, false
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Type != metav1.CauseTypeFieldValueInvalid || !nodePortField.MatchString(cause.Field) ||
			!strings.Contains(cause.Message, errPortAllocated) {
			continue
		}
		r := &PortRefused{App: appKey(ns, name)}
		// "Invalid value: 32714: provided port ..."; without the value, the
		// allocator takes the WebApp's current port as the refused one.
		if _, err := fmt.Sscanf(cause.Message, "Invalid value: %d:", &r.Port); err != nil {
			r.Port = 0
		}
		return r, true
	}
	return nil, false
}

// leaveRefused moves the WebApp of r off the port the API server refused:
// the port counts as taken (by no WebApp the allocator knows) until the
// next full resync, and the WebApp's Service is put again with another.
// A stale event, for a port the WebApp no longer has, changes nothing.
func (p *ports) leaveRefused(r *PortRefused, txn eventloop.UpdateOperations) string {
	app, ok := p.inv.apps[r.App]
	port, has := p.byApp[r.App]
	if !ok || !has || r.Port != 0 && r.Port != port {
		return ""
	}
	p.refused[port] = true
	delete(p.owner, port)
	delete(p.byApp, r.App)
	if !p.allocate(r.App) {
		// No other port: the WebApp's status says so, and it gets one
		// when another WebApp frees one. Its Service stays as desired.
		return fmt.Sprintf("%d refused by the API server for %s; no other port free", port, r.App)
	}
	p.putService(txn, app)
	return fmt.Sprintf("%d refused by the API server for %s: allocated %d", port, r.App, p.byApp[r.App])
}
