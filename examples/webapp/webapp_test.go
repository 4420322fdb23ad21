package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/examples/webapp/operator"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// syncBuffer collects the command's output from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// started runs the command in the background and returns its env once
// it is up, and a function that stops it and returns run's error.
func started(t *testing.T, o options, out io.Writer) (env, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	envs := make(chan env, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, o, out, func(e env) { envs <- e }) }()
	stop := sync.OnceValue(func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(time.Minute):
			return fmt.Errorf("run did not return within a minute of Ctrl-C")
		}
	})
	select {
	case e := <-envs:
		t.Cleanup(func() { _ = stop() })
		return e, stop
	case err := <-done:
		cancel()
		t.Fatalf("run ended before it started: %v\n%s", err, out)
	case <-time.After(3 * time.Minute):
		cancel()
		t.Fatalf("run did not start within 3 minutes\n%s", out)
	}
	return env{}, nil
}

// eventually polls cond until it returns nil or a minute passes.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func getApp(ctx context.Context, e env, ns, name string) (*demov1.WebApp, error) {
	return e.operator.WebApps().Get(ctx, ns, name, metav1.GetOptions{})
}

// readyApp waits until the WebApp's Ready condition has reason and returns
// the WebApp.
func waitReason(t *testing.T, e env, ns, name, reason string) *demov1.WebApp {
	t.Helper()
	var app *demov1.WebApp
	eventually(t, fmt.Sprintf("WebApp %s/%s reaching %s", ns, name, reason), func() (err error) {
		app, err = getApp(t.Context(), e, ns, name)
		if err != nil {
			return err
		}
		c := operator.Ready.Get(app.Status.Conditions)
		if c == nil || c.Reason != reason || c.ObservedGeneration != app.Generation {
			return fmt.Errorf("Ready is %+v", c)
		}
		return nil
	})
	return app
}

// children fetches a WebApp's ConfigMap, Deployment and Service.
func children(ctx context.Context, kube kubernetes.Interface, ns, name string) (*corev1.ConfigMap, *appsv1.Deployment, *corev1.Service, error) {
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, nil, err
	}
	d, err := kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, nil, err
	}
	svc, err := kube.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	return cm, d, svc, err
}

// checkChildren asserts that app's objects exist with the right content
// and owner, and returns its node port.
func checkChildren(t *testing.T, kube kubernetes.Interface, app *demov1.WebApp, wantData map[string]string) int32 {
	t.Helper()
	cm, d, svc, err := children(t.Context(), kube, app.Namespace, app.Name)
	if err != nil {
		t.Fatalf("objects of %s: %v", app.Name, err)
	}
	for _, obj := range []metav1.Object{cm, d, svc} {
		refs := obj.GetOwnerReferences()
		if len(refs) != 1 || refs[0].UID != app.UID || refs[0].Kind != "WebApp" || refs[0].Controller == nil || !*refs[0].Controller {
			t.Errorf("%s/%s %T: owner references %+v, want the WebApp (uid %s) as controller", app.Namespace, obj.GetName(), obj, refs, app.UID)
		}
		if obj.GetLabels()[kubedescriptor.LabelManagedBy] != operator.DefaultFieldManager {
			t.Errorf("%s %T: labels %v", obj.GetName(), obj, obj.GetLabels())
		}
	}
	if fmt.Sprint(cm.Data) != fmt.Sprint(wantData) {
		t.Errorf("ConfigMap %s data %v, want %v", app.Name, cm.Data, wantData)
	}
	c := d.Spec.Template.Spec.Containers
	if len(c) != 1 || c[0].Image != app.Spec.Image || c[0].Ports[0].ContainerPort != app.Spec.Port ||
		c[0].EnvFrom[0].ConfigMapRef.Name != app.Name || *d.Spec.Replicas != *app.Spec.Replicas {
		t.Errorf("Deployment %s: replicas %d, containers %+v", app.Name, *d.Spec.Replicas, c)
	}
	if d.Spec.Template.Annotations[operator.AnnotationConfigHash] == "" {
		t.Errorf("Deployment %s has no config hash", app.Name)
	}
	if svc.Spec.Type != corev1.ServiceTypeNodePort || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != app.Spec.Port ||
		svc.Spec.Ports[0].NodePort != app.Status.NodePort || svc.Spec.Selector[operator.LabelApp] != app.Name {
		t.Errorf("Service %s: %+v, status node port %d", app.Name, svc.Spec, app.Status.NodePort)
	}
	return svc.Spec.Ports[0].NodePort
}

// executedIn returns the sequence number of the first event whose
// transaction executed op on key, or -1. It reads each event's
// transaction from the scheduler's history by the sequence number the
// event history keeps.
func executedIn(records []eventloop.EventRecord, sched *kvscheduler.Scheduler, op kvscheduler.Operation, key string) int {
	for _, r := range records {
		txn := schedulerRecord(r, sched)
		if txn == nil {
			continue
		}
		for _, o := range txn.Executed {
			if o.Key == key && o.Operation == op && o.Err == nil && !o.NOOP {
				return int(r.SeqNum)
			}
		}
	}
	return -1
}

func getJSON(t *testing.T, url string, into any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, body)
	}
	if err := json.Unmarshal(body, into); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, body)
	}
}

// TestMakeRun does what `make run` does, without a terminal: a local
// control plane, the operator, the sample WebApps; then it checks what
// came of them, deletes a WebApp, deletes an object behind the
// operator's back, and stops everything.
func TestMakeRun(t *testing.T) {
	out := &syncBuffer{}
	e, stop := started(t, options{local: true, samples: true, crds: "../../crds", pause: 300 * time.Millisecond,
		listen: "127.0.0.1:0", logLevel: "warning", allowedHosts: []string{"dash.example.test"}, dashboardResync: true}, out)
	ctx := t.Context()
	kube := controlplanetest.Clientset(e.config)
	const ns = sampleNamespace

	// Every sample converges; the data of each ConfigMap carries its
	// configuration and the URLs of its dependencies.
	database := waitReason(t, e, ns, "database", operator.ReasonAvailable)
	api := waitReason(t, e, ns, "api", operator.ReasonAvailable)
	frontend := waitReason(t, e, ns, "frontend", operator.ReasonAvailable)
	ports := []int32{
		checkChildren(t, kube, database, map[string]string{"POSTGRES_DB": "shop"}),
		checkChildren(t, kube, api, map[string]string{"LOG_LEVEL": "info", "database.url": "http://database.demo.svc:5432"}),
		checkChildren(t, kube, frontend, map[string]string{"GREETING": "Hello from Lariat", "api.url": "http://api.demo.svc:8080"}),
	}
	slices.Sort(ports)
	if len(slices.Compact(slices.Clone(ports))) != 3 || ports[0] < 30000 || ports[2] > 32767 {
		t.Errorf("node ports %v are not three distinct ports of the default range", ports)
	}
	for _, app := range []*demov1.WebApp{database, api, frontend} {
		if len(app.Status.WaitingFor) != 0 || app.Status.ObservedGeneration != app.Generation {
			t.Errorf("%s status %+v", app.Name, app.Status)
		}
	}

	// The dependents waited: they reported what they waited for, and the
	// scheduler created their objects only after their dependency became
	// available.
	text := out.String()
	for _, want := range []string{
		"WebApp demo/frontend: Ready=False (WaitingForDependencies) waiting for api",
		"WebApp demo/api: Ready=False (WaitingForDependencies) waiting for database",
		"is PENDING, waiting for",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the output does not say %q:\n%s", want, text)
		}
	}
	records := e.operator.Loop().History().Records()
	if len(records) == 0 || records[0].SeqNum != 0 || records[0].Name != "Kubernetes Resync" {
		t.Fatalf("the first event is not the startup resync: %+v", records[:min(1, len(records))])
	}
	order := []struct {
		what string
		seq  int
	}{
		{"database's marker", executedIn(records, e.operator.Scheduler(), kvscheduler.OpCreate, operator.AvailableKey(ns, "database"))},
		{"api's ConfigMap", executedIn(records, e.operator.Scheduler(), kvscheduler.OpCreate, operator.ConfigMapKey(ns, "api"))},
		{"api's Deployment", executedIn(records, e.operator.Scheduler(), kvscheduler.OpCreate, operator.DeploymentKey(ns, "api"))},
		{"api's marker", executedIn(records, e.operator.Scheduler(), kvscheduler.OpCreate, operator.AvailableKey(ns, "api"))},
		{"frontend's ConfigMap", executedIn(records, e.operator.Scheduler(), kvscheduler.OpCreate, operator.ConfigMapKey(ns, "frontend"))},
	}
	for i, o := range order {
		if o.seq < 0 || i > 0 && o.seq < order[i-1].seq {
			t.Errorf("event history: %s created in event %d, after %s in event %d", o.what, o.seq, order[max(i-1, 0)].what, order[max(i-1, 0)].seq)
		}
	}
	// The dashboard's URL is the first thing printed, and it serves.
	if first, _, _ := strings.Cut(text, "\n"); !strings.Contains(first, "Dashboard: "+e.url+"/ui/") {
		t.Errorf("the first line is %q, want the dashboard's URL %s/ui/", first, e.url)
	}
	resp, err := http.Get(e.url + "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(page, []byte(`<svg id="graph"`)) {
		t.Errorf("GET /ui/: %s\n%s", resp.Status, page)
	}
	// --allowed-hosts: the name of a proxy in front of the listener is
	// answered, on the dashboard and the other endpoints; any other name
	// is refused (DNS rebinding).
	for _, c := range []struct {
		host, path string
		want       int
	}{
		{"dash.example.test", "/ui/api/info", http.StatusOK},
		{"dash.example.test:8443", "/scheduler/status?key=" + operator.DeploymentKey(ns, "frontend"), http.StatusOK},
		{"other.example.test", "/ui/api/info", http.StatusForbidden},
		{"other.example.test", "/controller/event-history", http.StatusForbidden},
	} {
		req, _ := http.NewRequestWithContext(ctx, "GET", e.url+c.path, nil)
		req.Host = c.host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET %s with Host %s: %s, want %d", c.path, c.host, resp.Status, c.want)
		}
	}
	// --dashboard-resync offers the page its one write action.
	var info struct{ Resync bool }
	getJSON(t, e.url+"/ui/api/info", &info)
	if !info.Resync {
		t.Error("with --dashboard-resync, the dashboard does not offer the resync request")
	}
	var graph struct{ Nodes []struct{ Key, State string } }
	getJSON(t, e.url+"/ui/api/graph", &graph)
	if len(graph.Nodes) != 12 {
		t.Errorf("the dashboard's graph has %d values, want the 12 of the three samples: %+v", len(graph.Nodes), graph.Nodes)
	}

	// The same history over HTTP, and the scheduler's view.
	var served []map[string]any
	getJSON(t, e.url+"/controller/event-history", &served)
	if len(served) < len(records) || served[0]["name"] != "Kubernetes Resync" {
		t.Errorf("/controller/event-history served %d records (loop has %d), first %v", len(served), len(records), served[0]["name"])
	}
	var st map[string]any
	getJSON(t, e.url+"/scheduler/status?key="+operator.DeploymentKey(ns, "frontend"), &st)
	if st["state"] != "CONFIGURED" {
		t.Errorf("/scheduler/status of frontend's Deployment: %v", st)
	}
	resp, err = http.Get(e.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, name := range []string{"lariat_eventloop_", "lariat_kvscheduler_", "lariat_queue_depth"} {
		if !bytes.Contains(metrics, []byte(name)) {
			t.Errorf("/metrics has no %s metrics", name)
		}
	}

	// A changed WebApp changes its objects: a new image and configuration
	// roll the Deployment (its config hash changes).
	before, err := kube.AppsV1().Deployments(ns).Get(ctx, "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	api.Spec.Image = "registry.k8s.io/e2e-test-images/agnhost:2.54"
	api.Spec.Config["LOG_LEVEL"] = "debug"
	if api, err = e.operator.WebApps().Update(ctx, api); err != nil {
		t.Fatal(err)
	}
	eventually(t, "api's Deployment and ConfigMap updated", func() error {
		d, err := kube.AppsV1().Deployments(ns).Get(ctx, "api", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "api", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Spec.Template.Spec.Containers[0].Image != api.Spec.Image || cm.Data["LOG_LEVEL"] != "debug" ||
			d.Spec.Template.Annotations[operator.AnnotationConfigHash] == before.Spec.Template.Annotations[operator.AnnotationConfigHash] {
			return fmt.Errorf("image %s, LOG_LEVEL %q, config hash %s (was %s)", d.Spec.Template.Spec.Containers[0].Image,
				cm.Data["LOG_LEVEL"], d.Spec.Template.Annotations[operator.AnnotationConfigHash], before.Spec.Template.Annotations[operator.AnnotationConfigHash])
		}
		return nil
	})
	api = waitReason(t, e, ns, "api", operator.ReasonAvailable)

	// A deleted WebApp's objects are pruned; the others stay.
	if err := e.operator.WebApps().Delete(ctx, ns, "frontend", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "frontend's objects pruned", func() error {
		for _, err := range []error{
			getErr(kube.CoreV1().ConfigMaps(ns).Get(ctx, "frontend", metav1.GetOptions{})),
			getErr(kube.AppsV1().Deployments(ns).Get(ctx, "frontend", metav1.GetOptions{})),
			getErr(kube.CoreV1().Services(ns).Get(ctx, "frontend", metav1.GetOptions{})),
		} {
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there (or %v)", err)
			}
		}
		return nil
	})
	if _, _, _, err := children(ctx, kube, ns, "api"); err != nil {
		t.Fatalf("api's objects after deleting frontend: %v", err)
	}

	// An object deleted behind the operator's back is restored.
	old, err := kube.AppsV1().Deployments(ns).Get(ctx, "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := kube.AppsV1().Deployments(ns).Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "api's Deployment restored", func() error {
		d, err := kube.AppsV1().Deployments(ns).Get(ctx, "api", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.UID == old.UID {
			return fmt.Errorf("still the old Deployment")
		}
		if d.Spec.Template.Spec.Containers[0].Image != api.Spec.Image {
			return fmt.Errorf("restored with image %s", d.Spec.Template.Spec.Containers[0].Image)
		}
		return nil
	})
	if !strings.Contains(out.String(), "apps/Deployment/demo/api deleted behind the operator's back: repair") {
		t.Errorf("the output does not tell about the repair:\n%s", out.String())
	}
	// So is one changed behind its back.
	svc, err := kube.CoreV1().Services(ns).Get(ctx, "database", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.Selector = map[string]string{"someone": "else"}
	if _, err := kube.CoreV1().Services(ns).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "database's Service repaired", func() error {
		svc, err := kube.CoreV1().Services(ns).Get(ctx, "database", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if svc.Spec.Selector[operator.LabelApp] != "database" {
			return fmt.Errorf("selector %v", svc.Spec.Selector)
		}
		return nil
	})
	waitReason(t, e, ns, "api", operator.ReasonAvailable)

	// Ctrl-C stops everything cleanly.
	if err := stop(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if !strings.Contains(out.String(), "Stopped; the control plane's processes and files are gone.") {
		t.Errorf("no clean stop in the output:\n%s", out.String())
	}
	t.Logf("output:\n%s", out.String())
}

func getErr(_ any, err error) error { return err }

// TestBadFlags checks that wrong flags fail at once, with a message that
// names the flag, before anything is started.
func TestBadFlags(t *testing.T) {
	for _, c := range []struct {
		o    options
		want string
	}{
		{options{listen: "127.0.0.1:0", logLevel: "info"}, "no cluster: pass --kubeconfig"},
		{options{local: true, listen: "127.0.0.1:0", logLevel: "loud"}, "not a valid logrus Level"},
		{options{local: true, listen: "127.0.0.1:0", logLevel: "info", nodePorts: "32000-31000"}, "--node-ports"},
		{options{local: true, listen: "127.0.0.1:0", logLevel: "info", waitForPods: "maybe"}, "--wait-for-pods"},
		{options{local: true, listen: "256.0.0.1:0", logLevel: "info"}, "choose another --listen"},
		{options{local: true, listen: "127.0.0.1:0", logLevel: "info", leaderElect: "maybe"}, "--leader-elect"},
		{options{local: true, listen: "127.0.0.1:0", logLevel: "info", installTermPolicy: "maybe"}, "--install-term-policy"},
	} {
		out := &syncBuffer{}
		err := run(t.Context(), c.o, out, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.o, err, c.want)
		}
		if strings.Contains(out.String(), "Starting a local control plane") {
			t.Errorf("%+v: started a control plane before failing", c.o)
		}
	}
}
