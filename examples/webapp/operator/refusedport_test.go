package operator_test

import (
	"testing"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/examples/webapp/operator"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAPortTheAPIServerRefusesIsLeftForAnother: the API server holds a node
// port the operator cannot see held (here a Service that is not the
// operator's; after a leader's cut-short create, a port allocated to no
// Service at all). The allocator, which thinks the port free, gives it to a
// WebApp; the API server refuses the Service ("provided port is already
// allocated"), and the WebApp must get another port and become available,
// rather than have the same Service refused for ever.
func TestAPortTheAPIServerRefusesIsLeftForAnother(t *testing.T) {
	ctx := t.Context()
	ns := controlplanetest.Namespace(t, cp.Config())
	ports := operator.PortRange{First: 30000, Last: 30009}
	freeNodePortsAtEnd(t, ns)
	kube := controlplanetest.Clientset(cp.Config())
	// Not labelled as the operator's: its cache never sees it.
	squatter := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "squatter", Namespace: ns},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": "squatter"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, NodePort: ports.First}}}}
	if _, err := kube.CoreV1().Services(ns).Create(ctx, squatter, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetLevel(logrus.FatalLevel)
	startOperator(t, operator.Options{Config: cp.Config(), Namespace: ns, Logger: log, NodePorts: ports})
	webapps := webAppClient(t)
	createWebApp(t, webapps, ns, "web")
	waitAvailable(t, webapps, ns, "web")

	svc, err := kube.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	port := svc.Spec.Ports[0].NodePort
	if port == ports.First || port < ports.First || port > ports.Last {
		t.Errorf("WebApp web's Service has node port %d, want one in %d-%d other than the refused %d",
			port, ports.First, ports.Last, ports.First)
	}
	if app, err := webapps.Get(ctx, ns, "web", metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if app.Status.NodePort != port {
		t.Errorf("WebApp web's status shows node port %d, its Service has %d", app.Status.NodePort, port)
	}
}
