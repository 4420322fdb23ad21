package operator

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/dependents"
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
	states      valueStates     // the scheduler's view; nil in handler tests
	repair      repairer        // nil in handler tests
	waitForPods bool            // see Options.WaitForPods
	available   map[string]bool // "namespace/name" -> marker put
}

// valueStates reads the scheduler's state of a value; *kvscheduler.Scheduler
// implements it, from any goroutine.
type valueStates interface {
	GetValueStatus(key string) kvscheduler.ValueStatus
}

// repairer re-reads the values of keys from the cluster and re-applies
// what differs from the desired state: a downstream resync scoped to
// those keys. It returns the scheduler transaction's sequence number.
type repairer func(keys []string) (seq uint64, err error)

// marker is the value of an availability marker. It depends on the
// markers of the WebApp's own dependencies, so that the scheduler
// withdraws it, and with it every dependent's objects, transitively, as
// soon as a dependency stops being available: a WebApp is only available
// while everything it depends on is.
type marker struct {
	// DependsOn are the keys of the markers of the WebApp's dependencies.
	DependsOn []string
}

// String is what the scheduler's history shows.
func (m marker) String() string {
	if len(m.DependsOn) == 0 {
		return "available"
	}
	return "available while " + strings.Join(m.DependsOn, ", ") + " are"
}

// markerOf returns the marker of app.
func markerOf(app *demov1.WebApp) marker { return marker{DependsOn: dependencyKeys(app)} }

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
			txn.Put(AvailableKey(app.Namespace, app.Name), markerOf(app))
		}
	})
	return nil
}

// Update implements eventloop.EventHandler.
func (a *availability) Update(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
	a.inv.observe(ev)
	if r, ok := ev.(*Repair); ok {
		return a.runRepair(r)
	}
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
		switch a.cause(key) {
		case foreign:
			verb := "changed"
			if ch.NewValue == nil {
				verb = "deleted"
			}
			if err := txn.PushFollowUp(&Repair{Key: key, Reason: verb}); err != nil {
				return "", err
			}
			notes = append(notes, fmt.Sprintf("%s %s behind the operator's back: repair", key, verb))
		case withdrawn:
			// The scheduler deleted the object because a dependency of the
			// WebApp went: the WebApp is no longer available, and must be
			// seen available again (its objects back) before its
			// dependents are released.
			if a.available[ch.Key] && ch.NewValue == nil {
				ns, name := splitAppKey(ch.Key)
				delete(a.available, ch.Key)
				txn.Delete(AvailableKey(ns, name))
				notes = append(notes, fmt.Sprintf("%s deleted by the scheduler: %s waits for its dependencies", key, ch.Key))
			}
		}
	}
	for _, key := range check {
		app, ok := a.inv.apps[key]
		switch {
		case !ok:
		case a.available[key]:
			// Its dependencies may have changed; the marker follows them
			// (an equal marker is no change for the scheduler).
			txn.Put(AvailableKey(app.Namespace, app.Name), markerOf(app))
		case a.isAvailable(key, app):
			a.available[key] = true
			txn.Put(AvailableKey(app.Namespace, app.Name), markerOf(app))
			notes = append(notes, key+" is available")
		}
	}
	return strings.Join(notes, "; "), nil
}

// changeCause says who changed a child.
type changeCause int

const (
	// own: the scheduler itself (or nothing differs from what it applied).
	own changeCause = iota
	// withdrawn: the scheduler deleted the object because the WebApp's
	// dependencies are unmet (its value is PENDING).
	withdrawn
	// foreign: someone else, behind the operator's back.
	foreign
)

// cause tells who made the change of the child at key that the event
// reports. The scheduler's own writes and deletes are told from foreign
// ones by its state of the value: only a value the scheduler holds as
// CONFIGURED is expected to exist as it was applied. A PENDING value's
// object was deleted by the scheduler for want of dependencies; a value
// that is FAILED or RETRYING is the scheduler's to retry, and one it no
// longer knows was withdrawn by the handlers. Without a scheduler (the
// handler tests) every difference counts as foreign.
func (a *availability) cause(key string) changeCause {
	if a.states != nil {
		switch a.states.GetValueStatus(key).State {
		case kvscheduler.Configured:
		case kvscheduler.Pending:
			return withdrawn
		default:
			return own
		}
	}
	if a.inv.isDrift(key) {
		return foreign
	}
	return own
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
	if d == nil || !a.waitForPods {
		return d != nil
	}
	// pkg/dependents' rule for a Deployment: its controller has seen its
	// generation and reports every replica available. Without a
	// controller manager (Lariat's bundled control plane) it never does.
	ready, _ := dependents.DefaultReady(d)
	return ready
}

// runRepair repairs the object of r, and nothing else: the scheduler reads
// back that one object (from the informer cache) and re-applies it if it
// differs from the desired state, so that a repair costs in proportion to
// the damage rather than to every object the operator manages.
func (a *availability) runRepair(r *Repair) (string, error) {
	if a.repair == nil {
		return "no scheduler to repair " + r.Key, nil
	}
	seq, err := a.repair([]string{r.Key})
	if err != nil {
		return "", fmt.Errorf("repairing %s: %w", r.Key, err)
	}
	return fmt.Sprintf("repaired %s (scheduler transaction %d)", r.Key, seq), nil
}

// Repair is the follow-up event the availability handler pushes when an
// object was changed or deleted behind the operator's back. Handling it,
// the availability handler asks the scheduler for a downstream resync
// scoped to that object's key (kvscheduler.Txn.WithResyncKeys), in which
// the scheduler reads the object back and re-applies it if it differs
// from the desired state. The event itself changes no value, so the loop
// commits no transaction of its own for it.
type Repair struct {
	// Key is the scheduler key of the object that drifted.
	Key string
	// Reason says what happened to it ("changed" or "deleted").
	Reason string
}

var _ eventloop.UpdateEvent = (*Repair)(nil)

// GetName implements eventloop.Event.
func (r *Repair) GetName() string { return "Repair" }

// String implements eventloop.Event.
func (r *Repair) String() string { return fmt.Sprintf("Repair (%s %s)", r.Key, r.Reason) }

// Method implements eventloop.Event: an update, as the repair is the
// availability handler's, scoped to one key; a DownstreamResync event
// would re-read every object of every kind.
func (r *Repair) Method() eventloop.EventMethodType { return eventloop.Update }

// IsBlocking implements eventloop.Event.
func (r *Repair) IsBlocking() bool { return false }

// TransactionType implements eventloop.UpdateEvent: a repair that fails
// (the cluster could not be read) makes the loop heal.
func (r *Repair) TransactionType() eventloop.UpdateTransactionType { return eventloop.BestEffort }

// Direction implements eventloop.UpdateEvent.
func (r *Repair) Direction() eventloop.UpdateDirectionType { return eventloop.Forward }

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
		Create:      func(context.Context, string, any) (any, error) { return nil, nil },
		Delete:      func(context.Context, string, any, any) error { return nil },
		// A new dependency list is an update, not a re-create, which would
		// take down the objects of every WebApp depending on this one.
		Update: func(context.Context, string, any, any, any) (any, error) { return nil, nil },
		Dependencies: func(_ string, v any) []kvscheduler.Dependency {
			m, _ := v.(marker)
			deps := make([]kvscheduler.Dependency, len(m.DependsOn))
			for i, k := range m.DependsOn {
				deps[i] = kvscheduler.Dependency{Key: k}
			}
			return deps
		},
	}
}
