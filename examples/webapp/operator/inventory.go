package operator

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// inventory is the first handler: it keeps the loop's picture of the world
// (the WebApps, their objects as the API server shows them, and what the
// handlers last asked the scheduler for) and tells the handlers after it
// which WebApps the current event touches. Only the loop goroutine uses
// it, so none of this state needs a lock: that is the point of the loop.
type inventory struct {
	apps    map[string]*demov1.WebApp   // "namespace/name" -> WebApp
	live    map[string]runtime.Object   // scheduler key -> object on the server
	desired map[string]runtime.Object   // scheduler key -> object last put
	touched []string                    // this event: WebApps to recompute, sorted
	removed []string                    // this event: WebApps deleted
	changed *kubebridge.KubeStateChange // this event: the change, if any
	note    string                      // this event: what the inventory saw
	child   string                      // this event: the scheduler key of the child it changed, if any
	last    eventloop.Event             // the event observed last
}

func newInventory() *inventory {
	return &inventory{apps: map[string]*demov1.WebApp{}, live: map[string]runtime.Object{}, desired: map[string]runtime.Object{}}
}

// String implements eventloop.EventHandler.
func (inv *inventory) String() string { return "inventory" }

// HandlesEvent implements eventloop.EventHandler: the inventory follows
// every event so that it can reset its per-event fields.
func (inv *inventory) HandlesEvent(eventloop.Event) bool { return true }

// Revert implements eventloop.EventHandler; the bridge's events are
// best-effort and never reverted.
func (inv *inventory) Revert(eventloop.Event) error { return nil }

// Resync implements eventloop.EventHandler: the state is the bridge's
// snapshot of every watched kind, and every WebApp is touched.
func (inv *inventory) Resync(_ eventloop.Event, state any, _ int, _ eventloop.ResyncOperations) error {
	st, _ := state.(kubebridge.State)
	*inv = *newInventory()
	for key, obj := range st[webAppResource] {
		if app, ok := obj.(*demov1.WebApp); ok {
			inv.apps[key] = app
		}
	}
	for _, r := range []struct {
		resource string
		kind     func(namespace, name string) string
	}{{configMapResource, ConfigMapKey}, {deploymentResource, DeploymentKey}, {serviceResource, ServiceKey}} {
		for key, obj := range st[r.resource] {
			ns, name := splitAppKey(key)
			inv.live[r.kind(ns, name)] = obj
		}
	}
	inv.touched = inv.sortedApps()
	return nil
}

// Update implements eventloop.EventHandler.
func (inv *inventory) Update(ev eventloop.Event, _ eventloop.UpdateOperations) (string, error) {
	inv.observe(ev)
	return inv.note, nil
}

// observe takes in ev once, whichever handler asks first. Every handler
// calls it at the start of Update, because a deletion visits the handlers
// in reverse order (eventloop.Reverse), and the inventory, first in line
// otherwise, would then be the last to hear of it.
func (inv *inventory) observe(ev eventloop.Event) {
	if ev == inv.last {
		return
	}
	inv.last = ev
	inv.touched, inv.removed, inv.changed, inv.note, inv.child = nil, nil, nil, "", ""
	change, ok := ev.(*kubebridge.KubeStateChange)
	if !ok {
		return
	}
	inv.changed = change
	ns, name := splitAppKey(change.Key)
	switch change.Resource {
	case configMapResource:
		inv.setLive(ConfigMapKey(ns, name), change.NewValue)
	case deploymentResource:
		inv.setLive(DeploymentKey(ns, name), change.NewValue)
	case serviceResource:
		inv.setLive(ServiceKey(ns, name), change.NewValue)
	case webAppResource:
		inv.observeWebApp(change, ns, name)
	}
}

// observeWebApp takes in the change of a WebApp.
func (inv *inventory) observeWebApp(change *kubebridge.KubeStateChange, ns, name string) {
	prev, _ := change.PrevValue.(*demov1.WebApp)
	app, _ := change.NewValue.(*demov1.WebApp)
	if app == nil {
		delete(inv.apps, change.Key)
		inv.removed = []string{change.Key}
	} else {
		inv.apps[change.Key] = app
		if prev != nil && !kubebridge.GenerationChanged(prev, app) {
			return // a status update: nothing to recompute
		}
	}
	// Dependents render this WebApp's address into their configuration.
	inv.touched = append(inv.dependents(ns, name), change.Key)
	slices.Sort(inv.touched)
	inv.touched = slices.Compact(inv.touched)
	inv.note = "touches " + strings.Join(inv.touched, ", ")
}

// setLive records the live object at a child's key; the event's child is
// that key.
func (inv *inventory) setLive(key string, obj runtime.Object) {
	inv.child = key
	if obj == nil {
		delete(inv.live, key)
		return
	}
	inv.live[key] = obj
}

// sortedApps lists the WebApps' keys in order.
func (inv *inventory) sortedApps() []string { return slices.Sorted(maps.Keys(inv.apps)) }

// dependents lists the WebApps of namespace that depend on name.
func (inv *inventory) dependents(namespace, name string) []string {
	var out []string
	for key, app := range inv.apps {
		if app.Namespace == namespace && slices.Contains(app.Spec.DependsOn, name) {
			out = append(out, key)
		}
	}
	return out
}

// put asks the scheduler for obj under key, remembering it so that the
// availability handler can tell drift from the operator's own changes.
func (inv *inventory) put(txn eventloop.ResyncOperations, key string, obj runtime.Object) {
	inv.desired[key] = obj
	txn.Put(key, obj)
}

// remove withdraws key from the scheduler, which deletes the object.
func (inv *inventory) remove(txn eventloop.UpdateOperations, key string) {
	delete(inv.desired, key)
	txn.Delete(key)
}

// dependencyKeys returns the availability markers app's objects wait for.
func dependencyKeys(app *demov1.WebApp) []string {
	out := make([]string, 0, len(app.Spec.DependsOn))
	for _, dep := range app.Spec.DependsOn {
		out = append(out, AvailableKey(app.Namespace, dep))
	}
	return out
}

// forTouched calls fn for every WebApp the event touches that still exists.
func (inv *inventory) forTouched(fn func(key string, app *demov1.WebApp)) {
	for _, key := range inv.touched {
		if app, ok := inv.apps[key]; ok {
			fn(key, app)
		}
	}
}

// describe summarises what a handler put, for the event history.
func describe(verb string, keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s", verb, strings.Join(keys, ", "))
}

// isDrift tells whether the live object at key differs from what was last
// put there (nil live means deleted behind the operator's back).
func (inv *inventory) isDrift(key string) bool {
	want, ok := inv.desired[key]
	if !ok {
		return false
	}
	live := inv.live[key]
	return live == nil || !kubedescriptor.Equivalent(live, want)
}
