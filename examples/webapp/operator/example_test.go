package operator_test

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/examples/webapp/operator"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// Example runs the operator on a control plane with the WebApp CRD and
// creates a WebApp before the one it depends on: the first waits, then
// both become available.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	op, err := operator.New(operator.Options{Config: cp.Config(), Namespace: "example", Logger: log})
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	defer func() { cancel(); <-done }() // stopped before the package's control plane is

	kube := controlplanetest.Clientset(cp.Config())
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "example"}}, metav1.CreateOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	webApp := func(name string, dependsOn ...string) *demov1.WebApp {
		return &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "example"},
			Spec: demov1.WebAppSpec{Image: "nginx:1.27", Replicas: ptr.To[int32](2), Port: 80, DependsOn: dependsOn}}
	}
	// waitFor polls until the WebApp's Ready condition has the reason.
	waitFor := func(name, reason string) {
		app, err := waitForReason(ctx, op.WebApps(), "example", name, reason, time.Minute)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %s: %s\n", name, reason, operator.Ready.Message(app.Status.Conditions))
	}

	if _, err := op.WebApps().Create(ctx, webApp("web", "db")); err != nil {
		fmt.Println(err)
		return
	}
	waitFor("web", operator.ReasonWaiting)
	if _, err := op.WebApps().Create(ctx, webApp("db")); err != nil {
		fmt.Println(err)
		return
	}
	waitFor("db", operator.ReasonAvailable)
	waitFor("web", operator.ReasonAvailable)
	// Output:
	// web: WaitingForDependencies: waiting for db (no such WebApp) to be available
	// db: Available: ConfigMap, Deployment and Service applied; node port 30001
	// web: Available: ConfigMap, Deployment and Service applied; node port 30000
}
