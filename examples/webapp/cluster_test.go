package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/examples/webapp/operator"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAgainstAnyCluster runs the command with --kubeconfig against a
// cluster without the CRD (--install-crds installs it) and feeds it bad
// and tricky input: an invalid configuration, a dependency cycle, a
// missing dependency that appears and goes again, a full node port range,
// and a restart that must change nothing.
func TestAgainstAnyCluster(t *testing.T) {
	cp := controlplanetest.Start(t, controlplane.Options{})
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	opts := options{kubeconfig: cp.KubeconfigPath(), installCRDs: true, crds: "../../crds",
		listen: "127.0.0.1:0", logLevel: "error", namespace: ns, nodePorts: "31000-31004", waitForPods: "false",
		installTermPolicy: "true"}
	e, stop := started(t, opts, &syncBuffer{})
	ctx := t.Context()
	// Leader election is on against a cluster; outside a pod its Lease is
	// in the operator's --namespace.
	if _, err := kube.CoordinationV1().Leases(ns).Get(ctx, defaultLeaseName, metav1.GetOptions{}); err != nil {
		t.Fatalf("the Lease is not in --namespace %s: %v", ns, err)
	}
	// --install-term-policy installed the term fence of its creates, and
	// everything below runs with it in force.
	if err := leader.CheckTermPolicy(ctx, kube.AdmissionregistrationV1(), ns, defaultLeaseName); err != nil {
		t.Errorf("--install-term-policy: %v", err)
	}
	create := func(name string, config map[string]string, dependsOn ...string) {
		t.Helper()
		app := &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: demov1.WebAppSpec{Image: "nginx", Replicas: ptr.To[int32](1), Port: 80, Config: config, DependsOn: dependsOn}}
		if _, err := e.operator.WebApps().Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	message := func(app *demov1.WebApp) string { return operator.Ready.Message(app.Status.Conditions) }

	create("solo", nil)
	solo := waitReason(t, e, ns, "solo", operator.ReasonAvailable)

	// The API server's own words reach the status.
	create("bad", map[string]string{"not a key!": "x"})
	bad := waitReason(t, e, ns, "bad", operator.ReasonFailed)
	if m := message(bad); !strings.Contains(m, "ConfigMap FAILED") || !strings.Contains(m, "not a key!") {
		t.Errorf("bad: Ready message %q does not say which object failed and why", m)
	}
	if err := e.operator.Loop().Health(); err != nil {
		t.Fatalf("one bad WebApp made the loop unhealthy: %v", err)
	}

	// a waits for a b that does not exist; once b appears (depending on
	// a), both report the cycle, although nothing in the scheduler changed.
	create("a", nil, "b")
	if a := waitReason(t, e, ns, "a", operator.ReasonWaiting); !strings.Contains(message(a), "b (no such WebApp)") {
		t.Errorf("a: Ready message %q", message(a))
	}
	create("b", nil, "a")
	for _, name := range []string{"a", "b"} {
		app := waitReason(t, e, ns, name, operator.ReasonCycle)
		other := map[string]string{"a": "b", "b": "a"}[name]
		if want := fmt.Sprintf("dependency cycle: %s -> %s -> %s", name, other, name); message(app) != want {
			t.Errorf("%s: Ready message %q, want %q", name, message(app), want)
		}
	}

	create("lonely", nil, "ghost")
	lonely := waitReason(t, e, ns, "lonely", operator.ReasonWaiting)
	if !slices.Equal(lonely.Status.WaitingFor, []string{"ghost"}) || !strings.Contains(message(lonely), "ghost (no such WebApp)") {
		t.Errorf("lonely: waitingFor %v, message %q", lonely.Status.WaitingFor, message(lonely))
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "lonely", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("lonely's ConfigMap exists while it waits (or %v)", err)
	}

	// The port range (five ports) is full now: solo, bad, a, b and lonely.
	create("ghost", nil)
	ghost := waitReason(t, e, ns, "ghost", operator.ReasonFailed)
	if m := message(ghost); !strings.Contains(m, "no free node port in 31000-31004") {
		t.Errorf("ghost: Ready message %q does not say the port range is full", m)
	}
	// Freeing one gives it to ghost, which lets lonely go on.
	if err := e.operator.WebApps().Delete(ctx, ns, "bad", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReason(t, e, ns, "ghost", operator.ReasonAvailable)
	waitReason(t, e, ns, "lonely", operator.ReasonAvailable)
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "lonely", metav1.GetOptions{})
	if err != nil || cm.Data["ghost.url"] != fmt.Sprintf("http://ghost.%s.svc:80", ns) {
		t.Fatalf("lonely's ConfigMap %v, %v", cm, err)
	}

	// Deleting a dependency takes its dependents' objects down; they wait
	// for it again.
	if err := e.operator.WebApps().Delete(ctx, ns, "ghost", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReason(t, e, ns, "lonely", operator.ReasonWaiting)
	eventually(t, "lonely's objects deleted", func() error {
		if _, err := kube.AppsV1().Deployments(ns).Get(ctx, "lonely", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("Deployment still there (or %v)", err)
		}
		return nil
	})

	// A restart picks up where the last run ended: same ports, no writes.
	before := services(t, kube, ns)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	e, _ = started(t, opts, &syncBuffer{})
	eventually(t, "startup resync committed", func() error {
		if rec, ok := e.operator.Loop().History().Get(0); !ok || rec.ProcessingEnd.IsZero() {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	time.Sleep(time.Second) // room for writes that must not happen
	if after := services(t, kube, ns); fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("the restart changed Services:\nbefore %v\nafter  %v", before, after)
	}
	if app := waitReason(t, e, ns, "solo", operator.ReasonAvailable); app.Status.NodePort != solo.Status.NodePort {
		t.Errorf("solo's node port moved from %d to %d", solo.Status.NodePort, app.Status.NodePort)
	}
}

// services maps each Service of ns to "nodePort@resourceVersion".
func services(t *testing.T, kube kubernetes.Interface, ns string) map[string]string {
	t.Helper()
	list, err := kube.CoreV1().Services(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list.Items {
		out[s.Name] = fmt.Sprintf("%d@%s", s.Spec.Ports[0].NodePort, s.ResourceVersion)
	}
	return out
}
