package operator

import (
	"fmt"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// PortRange is the inclusive range node ports are allocated from.
type PortRange struct {
	First, Last int32
}

// DefaultPortRange returns the API server's default service node port
// range, 30000-32767.
func DefaultPortRange() PortRange { return PortRange{First: 30000, Last: 32767} }

// ports hands out node ports, unique across all WebApps, and builds each
// WebApp's Service. Two WebApps created at the same moment must never get
// the same port; because the loop runs one event at a time, a plain map is
// enough, where concurrent reconcilers would need a lock or a retry on the
// API server's "port already allocated".
type ports struct {
	inv   *inventory
	notes *notices
	log   logrus.FieldLogger
	r     PortRange
	byApp map[string]int32 // "namespace/name" -> node port
	owner map[int32]string // node port -> "namespace/name"
	// refused holds the ports the API server refused as already
	// allocated, held by no Service the operator sees; a full resync,
	// which lists the Services again, forgets them.
	refused map[int32]bool
}

func newPorts(inv *inventory, notes *notices, r PortRange, log logrus.FieldLogger) *ports {
	return &ports{inv: inv, notes: notes, r: r, log: log, byApp: map[string]int32{}, owner: map[int32]string{}, refused: map[int32]bool{}}
}

// String implements eventloop.EventHandler.
func (p *ports) String() string { return "port-allocator" }

// HandlesEvent implements eventloop.EventHandler.
func (p *ports) HandlesEvent(eventloop.Event) bool { return true }

// Revert implements eventloop.EventHandler.
func (p *ports) Revert(eventloop.Event) error { return nil }

// Resync implements eventloop.EventHandler. Ports already in use stay with
// their WebApp, so restarting the operator changes no Service: every live
// Service's port first, then, for WebApps with none, the port recorded in
// their status. The live ports go first, for all WebApps, because the API
// server refuses a port another Service holds, while a status may be stale.
// WebApps still without a port get the lowest free one, in name order.
func (p *ports) Resync(_ eventloop.Event, _ any, _ int, txn eventloop.ResyncOperations) error {
	p.byApp, p.owner, p.refused = map[string]int32{}, map[int32]string{}, map[int32]bool{}
	p.notes.reset()
	keys := p.inv.touched // every WebApp, sorted
	for _, key := range keys {
		p.take(key, p.livePort(p.inv.apps[key]))
	}
	for _, key := range keys {
		if _, ok := p.byApp[key]; !ok {
			p.take(key, p.inv.apps[key].Status.NodePort)
		}
	}
	for _, key := range keys {
		if p.allocate(key) {
			p.putService(txn, p.inv.apps[key])
		}
	}
	return nil
}

// Update implements eventloop.EventHandler.
func (p *ports) Update(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
	p.inv.observe(ev)
	if r, ok := ev.(*PortRefused); ok {
		return p.leaveRefused(r, txn), nil
	}
	var freed, put []string
	if moved := p.followLiveService(txn); moved != "" {
		put = append(put, moved)
	}
	for _, key := range p.inv.removed {
		p.notes.clear(key)
		if port, ok := p.byApp[key]; ok {
			delete(p.owner, port)
			delete(p.byApp, key)
			freed = append(freed, fmt.Sprintf("%d (%s)", port, key))
		}
		ns, name := splitAppKey(key)
		p.inv.remove(txn, ServiceKey(ns, name))
	}
	if len(freed) > 0 {
		// WebApps that found the range full get the freed ports.
		for _, key := range p.inv.sortedApps() {
			if _, ok := p.byApp[key]; !ok && p.allocate(key) {
				put = append(put, fmt.Sprintf("%d to %s", p.byApp[key], key))
				p.putService(txn, p.inv.apps[key])
			}
		}
	}
	p.inv.forTouched(func(key string, app *demov1.WebApp) {
		_, had := p.byApp[key]
		if !p.allocate(key) {
			return
		}
		if !had {
			put = append(put, fmt.Sprintf("%d to %s", p.byApp[key], key))
		}
		p.putService(txn, app)
	})
	switch {
	case len(put) > 0 && len(freed) > 0:
		return describe("allocated", put) + "; " + describe("freed", freed), nil
	case len(put) > 0:
		return describe("allocated", put), nil
	}
	return describe("freed", freed), nil
}

// followLiveService gives a WebApp the port its live Service turned out to
// hold, when the event is that Service and the port is in range: a replica
// that led before may have written it after this one's resync listed the
// Services. The API server refuses the port to anyone else, so a WebApp the
// allocator had given it to gets another one. It returns what it moved.
func (p *ports) followLiveService(txn eventloop.UpdateOperations) string {
	change := p.inv.changed
	if change == nil || change.Resource != serviceResource || change.NewValue == nil {
		return ""
	}
	key := change.Key // the Service is named after its WebApp
	app, ok := p.inv.apps[key]
	if !ok {
		return ""
	}
	port := p.livePort(app)
	if port < p.r.First || port > p.r.Last || p.byApp[key] == port {
		return ""
	}
	if old, ok := p.byApp[key]; ok {
		delete(p.owner, old)
		delete(p.byApp, key)
	}
	evicted, hadOwner := p.owner[port]
	if hadOwner {
		delete(p.byApp, evicted)
		delete(p.owner, port)
	}
	delete(p.refused, port) // the API server gave it to this WebApp
	p.take(key, port)
	p.notes.clear(key)
	p.putService(txn, app)
	moved := fmt.Sprintf("%d to %s (its live Service's)", port, key)
	if hadOwner && p.allocate(evicted) {
		p.putService(txn, p.inv.apps[evicted])
		moved += fmt.Sprintf(", %d to %s", p.byApp[evicted], evicted)
	}
	return moved
}

// livePort is the node port of the WebApp's Service on the server, or 0.
func (p *ports) livePort(app *demov1.WebApp) int32 {
	svc, _ := p.inv.live[ServiceKey(app.Namespace, app.Name)].(*corev1.Service)
	if svc == nil || len(svc.Spec.Ports) == 0 {
		return 0
	}
	return svc.Spec.Ports[0].NodePort
}

// take gives port to key if it is in range and free.
func (p *ports) take(key string, port int32) bool {
	if port < p.r.First || port > p.r.Last {
		return false
	}
	if owner, used := p.owner[port]; used && owner != key || p.refused[port] {
		return false
	}
	p.owner[port] = key
	p.byApp[key] = port
	return true
}

// allocate makes sure key has a port. When the range is used up the
// WebApp gets no Service and a notice its status shows (it gets a port
// when one is freed), rather than an error that would make the loop heal,
// and fail, again and again.
func (p *ports) allocate(key string) bool {
	if _, ok := p.byApp[key]; ok {
		return true
	}
	for port := p.r.First; port <= p.r.Last; port++ {
		if p.take(key, port) {
			p.notes.clear(key)
			return true
		}
	}
	problem := fmt.Sprintf("no free node port in %d-%d for the Service", p.r.First, p.r.Last)
	p.notes.set(key, problem)
	p.log.WithField("webapp", key).Warn(problem)
	return false
}

// Port returns the node port allocated to a WebApp, for the loop's
// goroutine only.
func (p *ports) port(key string) (int32, bool) {
	port, ok := p.byApp[key]
	return port, ok
}

func (p *ports) putService(txn eventloop.ResyncOperations, app *demov1.WebApp) {
	port := p.byApp[appKey(app.Namespace, app.Name)]
	svc := &corev1.Service{
		ObjectMeta: childMeta(app),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeNodePort,
			Selector: selector(app),
			Ports: []corev1.ServicePort{{
				Name: "http", Port: app.Spec.Port, TargetPort: intstr.FromInt32(app.Spec.Port), NodePort: port,
			}},
		},
	}
	svc.SetGroupVersionKind(serviceKind)
	// Exposed once deployed: the Service waits for the Deployment, and
	// through it for the dependencies.
	kubedescriptor.DependsOn(svc, append([]string{DeploymentKey(app.Namespace, app.Name)}, dependencyKeys(app)...)...)
	p.inv.put(txn, ServiceKey(app.Namespace, app.Name), svc)
}
