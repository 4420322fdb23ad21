package operator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/examples/webapp/operator"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// childrenGone tells whether none of the WebApp's ConfigMap, Deployment
// and Service exists on the server.
func childrenGone(ctx context.Context, kube kubernetes.Interface, ns, name string) error {
	for kind, err := range map[string]error{
		"ConfigMap":  getErr(kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})),
		"Deployment": getErr(kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})),
		"Service":    getErr(kube.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})),
	} {
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s %s still there (or %v)", kind, name, err)
		}
	}
	return nil
}

func getErr(_ any, err error) error { return err }

// repairs lists the repairs the operator's loop decided on: its Repair
// events and the availability handler's notes that ask for one.
func repairs(op *operator.Operator) []string {
	var out []string
	for _, rec := range op.Loop().History().Records() {
		if rec.Name == "Repair" {
			out = append(out, fmt.Sprintf("event %d: %s", rec.SeqNum, rec.Name))
		}
		for _, h := range rec.Handlers {
			if strings.Contains(h.Change, "repair") {
				out = append(out, fmt.Sprintf("event %d: %s: %s", rec.SeqNum, h.Handler, h.Change))
			}
		}
	}
	return out
}

// TestDeletingTheRootOfAChainTakesEveryDependentDown deletes the first of
// three WebApps that depend on each other in a line: every dependent, not
// only the direct one, stops being available, its objects are deleted and
// it reports that it waits; the scheduler's own deletions are not taken
// for objects deleted behind the operator's back. Recreating the root
// brings the whole chain back.
func TestDeletingTheRootOfAChainTakesEveryDependentDown(t *testing.T) {
	ctx := t.Context()
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	op, _ := startOperator(t, operator.Options{Config: cp.Config(), Namespace: ns, Logger: log,
		NodePorts: operator.PortRange{First: 32400, Last: 32499}})

	root := func() *demov1.WebApp {
		return &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: "database", Namespace: ns},
			Spec: demov1.WebAppSpec{Image: "postgres", Replicas: ptr.To[int32](1), Port: 5432}}
	}
	for _, app := range []*demov1.WebApp{
		root(),
		{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
			Spec: demov1.WebAppSpec{Image: "api", Replicas: ptr.To[int32](1), Port: 8080, DependsOn: []string{"database"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "frontend", Namespace: ns},
			Spec: demov1.WebAppSpec{Image: "nginx", Replicas: ptr.To[int32](1), Port: 80, DependsOn: []string{"api"}}},
	} {
		if _, err := op.WebApps().Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	chain := []string{"database", "api", "frontend"}
	for _, name := range chain {
		if _, err := waitForReason(ctx, op.WebApps(), ns, name, operator.ReasonAvailable, time.Minute); err != nil {
			t.Fatal(err)
		}
	}

	if err := op.WebApps().Delete(ctx, ns, "database", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range chain[1:] {
		app, err := waitForReason(ctx, op.WebApps(), ns, name, operator.ReasonWaiting, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"api": "database", "frontend": "api"}[name]; len(app.Status.WaitingFor) != 1 || app.Status.WaitingFor[0] != want {
			t.Errorf("%s waits for %v, want [%s]", name, app.Status.WaitingFor, want)
		}
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		err := childrenGone(ctx, kube, ns, "database")
		for _, name := range chain[1:] {
			if err == nil {
				err = childrenGone(ctx, kube, ns, name)
			}
		}
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after deleting database: %v", err)
		}
	}
	// The deletions of the dependents' objects come back through the
	// informers; give the loop time to see them all before judging.
	time.Sleep(time.Second)
	if got := repairs(op); len(got) > 0 {
		t.Errorf("the scheduler's own deletions were taken for drift:\n%s", strings.Join(got, "\n"))
	}

	if _, err := op.WebApps().Create(ctx, root()); err != nil {
		t.Fatal(err)
	}
	for _, name := range chain {
		if _, err := waitForReason(ctx, op.WebApps(), ns, name, operator.ReasonAvailable, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range chain {
		if err := childrenGone(ctx, kube, ns, name); err == nil {
			t.Errorf("%s is Available without its objects", name)
		}
	}
	if got := repairs(op); len(got) > 0 {
		t.Errorf("repairs while the chain came back:\n%s", strings.Join(got, "\n"))
	}
}
