package operator

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// availability is the last handler. It decides from the objects the API
// server shows which WebApps are available and puts their markers, which
// release the objects of the WebApps that depend on them. It also notices
// objects changed or deleted behind the operator's back and asks the
// scheduler to repair them.
type availability struct {
	inv         *inventory
	ports       *ports
	waitForPods bool            // see Options.WaitForPods
	available   map[string]bool // "namespace/name" -> marker put
}

// marker is the value of an availability marker; the scheduler only needs
// it to exist, the text is for people reading its history.
type marker string

// String implements eventloop.EventHandler.
func (a *availability) String() string { return "availability" }

// HandlesEvent implements eventloop.EventHandler.
func (a *availability) HandlesEvent(eventloop.Event) bool { return true }

// Revert implements eventloop.EventHandler.
func (a *availability) Revert(eventloop.Event) error { return nil }

// Resync implements eventloop.EventHandler.
func (a *availability) Resync(_ eventloop.Event, _ any, _ int, txn eventloop.ResyncOperations) error {
	a.available = map[string]bool{}
	a.inv.forTouched(func(key string, app *demov1.WebApp) {
		if a.isAvailable(key, app) {
			a.available[key] = true
			txn.Put(AvailableKey(app.Namespace, app.Name), marker("available"))
		}
	})
	return nil
}

// Update implements eventloop.EventHandler.
func (a *availability) Update(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
	a.inv.observe(ev)
	var notes []string
	for _, key := range a.inv.removed {
		ns, name := splitAppKey(key)
		if a.available[key] {
			delete(a.available, key)
			txn.Delete(AvailableKey(ns, name))
			notes = append(notes, key+" is gone")
		}
	}
	check := append([]string(nil), a.inv.touched...)
	if key := a.inv.child; key != "" {
		ch := a.inv.changed
		check = append(check, ch.Key) // a child is named after its WebApp
		if a.inv.isDrift(key) {
			verb := "changed"
			if ch.NewValue == nil {
				verb = "deleted"
			}
			if err := txn.PushFollowUp(&Repair{Key: key, Reason: verb}); err != nil {
				return "", err
			}
			notes = append(notes, fmt.Sprintf("%s %s behind the operator's back: repair", key, verb))
		}
	}
	for _, key := range check {
		app, ok := a.inv.apps[key]
		if !ok || a.available[key] || !a.isAvailable(key, app) {
			continue
		}
		a.available[key] = true
		txn.Put(AvailableKey(app.Namespace, app.Name), marker("available"))
		notes = append(notes, key+" is available")
	}
	return strings.Join(notes, "; "), nil
}

// isAvailable reads the server's objects of app: all three exist, the
// Service has the allocated node port, and, with waitForPods, the
// Deployment's controller reports as many available replicas as desired.
func (a *availability) isAvailable(key string, app *demov1.WebApp) bool {
	ns, name := app.Namespace, app.Name
	if a.inv.live[ConfigMapKey(ns, name)] == nil {
		return false
	}
	svc, _ := a.inv.live[ServiceKey(ns, name)].(*corev1.Service)
	port, ok := a.ports.port(key)
	if svc == nil || !ok || len(svc.Spec.Ports) == 0 || svc.Spec.Ports[0].NodePort != port {
		return false
	}
	d, _ := a.inv.live[DeploymentKey(ns, name)].(*appsv1.Deployment)
	return d != nil && (!a.waitForPods || podsAvailable(d))
}

// podsAvailable tells whether the Deployment's controller has seen its
// current generation and reports all replicas available. Without a
// controller manager (as on Lariat's bundled control plane) it never does.
func podsAvailable(d *appsv1.Deployment) bool {
	return d.Status.ObservedGeneration > 0 && d.Status.ObservedGeneration >= d.Generation &&
		d.Status.AvailableReplicas >= ptr.Deref(d.Spec.Replicas, 1)
}

// Repair is the follow-up event the availability handler pushes when an
// object was changed or deleted behind the operator's back: a downstream
// resync, in which the scheduler reads the objects back and re-applies
// what differs from the desired state.
type Repair struct {
	// Key is the scheduler key of the object that drifted.
	Key string
	// Reason says what happened to it ("changed" or "deleted").
	Reason string
}

var _ eventloop.Event = (*Repair)(nil)

// GetName implements eventloop.Event.
func (r *Repair) GetName() string { return "Repair" }

// String implements eventloop.Event.
func (r *Repair) String() string { return fmt.Sprintf("Repair (%s %s)", r.Key, r.Reason) }

// Method implements eventloop.Event.
func (r *Repair) Method() eventloop.EventMethodType { return eventloop.DownstreamResync }

// IsBlocking implements eventloop.Event.
func (r *Repair) IsBlocking() bool { return false }

// Done implements eventloop.Event.
func (r *Repair) Done(error) {}

// availabilityDescriptor handles the markers. They exist only in the
// scheduler: creating or deleting one changes nothing outside it, and
// their only effect is to satisfy the dependencies of other values.
func availabilityDescriptor() *kvscheduler.Descriptor {
	return &kvscheduler.Descriptor{
		Name:        "webapp-availability",
		NBKeyPrefix: AvailablePrefix,
		KeySelector: func(key string) bool { return strings.HasPrefix(key, AvailablePrefix) },
		Create:      func(string, any) (any, error) { return nil, nil },
		Delete:      func(string, any, any) error { return nil },
	}
}
