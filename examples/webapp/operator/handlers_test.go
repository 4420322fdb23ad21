package operator

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// These tests run the handlers in a real event loop with a recording
// committer instead of the scheduler: no API server, only the handlers'
// logic.

type harness struct {
	t     *testing.T
	loop  *eventloop.Loop
	txns  *eventlooptest.Committer
	notes *notices
	seq   uint64 // of the last event pushed
}

func newHarness(t *testing.T, r PortRange, state kubebridge.State) *harness {
	return newHarnessWaitingForPods(t, r, state, false)
}

func newHarnessWaitingForPods(t *testing.T, r PortRange, state kubebridge.State, waitForPods bool) *harness {
	t.Helper()
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	h := &harness{t: t, txns: eventlooptest.NewCommitter(), notes: &notices{}}
	cfg := eventloop.DefaultConfig()
	cfg.EventLogLevel = logrus.DebugLevel
	loop, err := eventloop.New(eventloop.Options{Config: &cfg, Handlers: newHandlers(h.notes, nil, nil, r, waitForPods, log), Committer: h.txns, Logger: logrus.NewEntry(log)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { loop.Close() })
	if err := loop.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.loop = loop
	h.push(&kubebridge.KubeResync{State: state})
	return h
}

// push processes ev and waits until the loop has recorded it.
func (h *harness) push(ev eventloop.Event) {
	h.t.Helper()
	if err := h.loop.PushEvent(ev); err != nil {
		h.t.Fatal(err)
	}
	if _, ok := ev.(*kubebridge.KubeResync); !ok {
		h.seq++
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if rec, ok := h.loop.History().Get(h.seq); ok && !rec.ProcessingEnd.IsZero() {
			for _, hr := range rec.Handlers {
				if hr.Error != nil {
					h.t.Fatalf("%s: %v", hr.Handler, hr.Error)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("event %d not processed", h.seq)
		}
	}
}

func (h *harness) value(key string) runtime.Object {
	obj, _ := h.txns.State()[key].(runtime.Object)
	return obj
}

// nodePort returns the node port of the Service desired for name, 0 if none.
func (h *harness) nodePort(name string) int32 {
	svc, _ := h.value(ServiceKey("ns", name)).(*corev1.Service)
	if svc == nil {
		return 0
	}
	return svc.Spec.Ports[0].NodePort
}

func webApp(name string, gen int64, dependsOn ...string) *demov1.WebApp {
	return &demov1.WebApp{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), Generation: gen},
		Spec:       demov1.WebAppSpec{Image: "img", Port: 80, DependsOn: dependsOn, Config: map[string]string{"v": fmt.Sprint(gen)}},
	}
}

func changed(prev, next *demov1.WebApp) *kubebridge.KubeStateChange {
	ev := &kubebridge.KubeStateChange{Resource: webAppResource}
	if next != nil {
		ev.Key, ev.NewValue = next.Namespace+"/"+next.Name, next
	} else {
		ev.Key = prev.Namespace + "/" + prev.Name
	}
	return ev
}

func TestPortsStayWithTheirWebAppsAcrossResyncsAndAreUnique(t *testing.T) {
	a, b, c := webApp("a", 1), webApp("b", 1), webApp("c", 1)
	b.Status.NodePort = 30000 // recorded by an earlier run
	liveSvc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{NodePort: 30005}}}}
	h := newHarness(t, DefaultPortRange(), kubebridge.State{
		webAppResource:  {"ns/a": a, "ns/b": b, "ns/c": c},
		serviceResource: {"ns/a": liveSvc},
	})
	if got := [3]int32{h.nodePort("a"), h.nodePort("b"), h.nodePort("c")}; got != [3]int32{30005, 30000, 30001} {
		t.Fatalf("after the startup resync: ports %v, want the live one, the recorded one, the lowest free", got)
	}
	h.push(changed(nil, webApp("d", 1)))
	if p := h.nodePort("d"); p != 30002 {
		t.Fatalf("d got %d, want 30002", p)
	}
	h.push(changed(b, nil))
	if h.value(ServiceKey("ns", "b")) != nil || h.value(ConfigMapKey("ns", "b")) != nil || h.value(DeploymentKey("ns", "b")) != nil {
		t.Fatal("b's objects are still desired after its deletion")
	}
	h.push(changed(nil, webApp("e", 1)))
	if p := h.nodePort("e"); p != 30000 {
		t.Fatalf("e got %d, want b's freed 30000", p)
	}
}

func TestAFullRangeWaitsForAFreedPort(t *testing.T) {
	a, b := webApp("a", 1), webApp("b", 1)
	h := newHarness(t, PortRange{First: 30000, Last: 30001}, kubebridge.State{webAppResource: {"ns/a": a, "ns/b": b}})
	h.push(changed(nil, webApp("c", 1)))
	if h.nodePort("c") != 0 || h.notes.get("ns/c") == "" {
		t.Fatalf("c: port %d, notice %q; want none and a notice", h.nodePort("c"), h.notes.get("ns/c"))
	}
	h.push(changed(a, nil))
	if h.nodePort("c") != 30000 || h.notes.get("ns/c") != "" {
		t.Fatalf("c: port %d, notice %q; want a's 30000 and no notice", h.nodePort("c"), h.notes.get("ns/c"))
	}
}

func TestConfigurationChangesReachDependentsAndRollPods(t *testing.T) {
	api, web := webApp("api", 1), webApp("web", 1, "api")
	h := newHarness(t, DefaultPortRange(), kubebridge.State{webAppResource: {"ns/api": api, "ns/web": web}})
	hash := func(name string) string {
		return h.value(DeploymentKey("ns", name)).(*appsv1.Deployment).Spec.Template.Annotations[AnnotationConfigHash]
	}
	cm := func(name string) map[string]string { return h.value(ConfigMapKey("ns", name)).(*corev1.ConfigMap).Data }
	if cm("web")["api.url"] != "http://api.ns.svc:80" {
		t.Fatalf("web's configuration %v lacks api's URL", cm("web"))
	}
	apiHash, webHash := hash("api"), hash("web")

	// A new generation of api with another port and configuration.
	api2 := webApp("api", 2)
	api2.Spec.Port = 8080
	h.push(changed(api, api2))
	if cm("web")["api.url"] != "http://api.ns.svc:8080" {
		t.Errorf("web's configuration %v does not follow api's port", cm("web"))
	}
	if hash("api") == apiHash || hash("web") == webHash {
		t.Errorf("config hashes did not change: api %s -> %s, web %s -> %s", apiHash, hash("api"), webHash, hash("web"))
	}

	// A status update (same generation) changes nothing.
	before := len(h.txns.Txns())
	api3 := api2.DeepCopy()
	api3.Status.NodePort = 30000
	h.push(changed(api2, api3))
	for _, txn := range h.txns.Txns()[before:] {
		if len(txn.Values) > 0 {
			t.Errorf("a status update put %d values", len(txn.Values))
		}
	}

	// Every object of web waits for api's availability marker.
	for _, key := range []string{ConfigMapKey("ns", "web"), DeploymentKey("ns", "web"), ServiceKey("ns", "web")} {
		m, err := meta.Accessor(h.value(key))
		if err != nil {
			t.Fatal(err)
		}
		deps := strings.Split(m.GetAnnotations()[kubedescriptor.AnnotationDependsOn], ",")
		if !slices.Contains(deps, AvailableKey("ns", "api")) {
			t.Errorf("%s depends on %v, not on api's availability", key, deps)
		}
	}
}

// live pushes the object desired at key as if the API server showed it
// (optionally changed by edit), the way the bridge would.
func (h *harness) live(resource, key string, edit func(runtime.Object)) {
	h.t.Helper()
	obj := h.value(key).DeepCopyObject()
	if edit != nil {
		edit(obj)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		h.t.Fatal(err)
	}
	h.push(&kubebridge.KubeStateChange{Resource: resource, Key: m.GetNamespace() + "/" + m.GetName(), NewValue: obj})
}

func TestAvailabilityWaitsForPodsWhenAsked(t *testing.T) {
	for _, waitForPods := range []bool{false, true} {
		t.Run(fmt.Sprint("waitForPods=", waitForPods), func(t *testing.T) {
			h := newHarnessWaitingForPods(t, DefaultPortRange(), kubebridge.State{webAppResource: {"ns/a": webApp("a", 1)}}, waitForPods)
			marker := func() bool { return h.txns.State()[AvailableKey("ns", "a")] != nil }
			h.live(configMapResource, ConfigMapKey("ns", "a"), nil)
			h.live(serviceResource, ServiceKey("ns", "a"), nil)
			if marker() {
				t.Fatal("available without a Deployment")
			}
			h.live(deploymentResource, DeploymentKey("ns", "a"), nil) // as created: no status yet
			if marker() != !waitForPods {
				t.Fatalf("right after the Deployment's creation: available %v", marker())
			}
			h.live(deploymentResource, DeploymentKey("ns", "a"), func(obj runtime.Object) {
				d := obj.(*appsv1.Deployment)
				d.Generation = 1
				d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, AvailableReplicas: 1}
			})
			if !marker() {
				t.Fatal("not available once the Deployment reports its replicas available")
			}
		})
	}
}

// service is a live Service of WebApp name in namespace ns holding port.
func service(name string, port int32) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{NodePort: port}}}}
}

// TestALivePortIsNeverGivenToAnotherWebApp: the API server refuses a node
// port another Service holds, so a port a live Service holds stays with its
// WebApp, over a port merely recorded in another WebApp's status (a stale
// record, found first in name order), and over the allocator's own choice
// when the Service shows up late (written by a replica that led before).
func TestALivePortIsNeverGivenToAnotherWebApp(t *testing.T) {
	a, b := webApp("a", 1), webApp("b", 1)
	a.Status.NodePort = 30000 // stale: b's Service holds 30000 now
	h := newHarness(t, DefaultPortRange(), kubebridge.State{
		webAppResource:  {"ns/a": a, "ns/b": b},
		serviceResource: {"ns/b": service("b", 30000)},
	})
	if pa, pb := h.nodePort("a"), h.nodePort("b"); pb != 30000 || pa == 30000 {
		t.Fatalf("after the resync a has %d and b %d; want b to keep its live 30000", pa, pb)
	}

	// c is created; d's Service, written with port 30002 by a replica that
	// led before, reaches this one only after c took that port.
	h.push(changed(nil, webApp("c", 1)))
	h.push(changed(nil, webApp("d", 1)))
	taken := h.nodePort("c")
	h.push(&kubebridge.KubeStateChange{Resource: serviceResource, Key: "ns/d", NewValue: service("d", taken)})
	if pc, pd := h.nodePort("c"), h.nodePort("d"); pd != taken || pc == taken || pc == 0 {
		t.Fatalf("d's live Service holds %d; now c has %d and d %d, want d to keep it and c another", taken, pc, pd)
	}
	ports := map[int32]string{}
	for _, name := range []string{"a", "b", "c", "d"} {
		p := h.nodePort(name)
		if other, dup := ports[p]; dup {
			t.Fatalf("%s and %s both have port %d", other, name, p)
		}
		ports[p] = name
	}
}
