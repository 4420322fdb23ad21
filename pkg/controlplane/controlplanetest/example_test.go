package controlplanetest_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// cp is the package's control plane, shared by its tests and examples.
var cp *controlplane.ControlPlane

// TestMain starts one control plane for the whole package: starting one
// takes seconds, so a package pays for it once. An operator's tests would
// also install their CRDs: controlplane.Options{CRDDirs: []string{"../crds"}}.
func TestMain(m *testing.M) {
	controlplanetest.Main(m, controlplane.Options{}, &cp)
}

// Tests and examples of a package whose TestMain calls Main reach the API
// server through cp. A test would write into a namespace of its own, from
// controlplanetest.Namespace(t, cp.Config()).
func ExampleMain() {
	ctx := context.Background()
	kube := controlplanetest.Clientset(cp.Config())
	cm, err := kube.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "example-main"},
		Data:       map[string]string{"greeting": "hello"},
	}, metav1.CreateOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("created", cm.Namespace+"/"+cm.Name, "with uid:", cm.UID != "")
	// Output: created default/example-main with uid: true
}

// A test that stops, restarts or partitions the API server takes a control
// plane of its own, so that it does not disturb the package's other tests.
// Start stops it when the test ends. (An example has no *testing.T, so the
// test is only compiled here.)
func ExampleStart() {
	testRestart := func(t *testing.T) {
		cp := controlplanetest.Start(t, controlplane.Options{})
		ns := controlplanetest.Namespace(t, cp.Config())
		if err := cp.RestartAPIServer(t.Context()); err != nil {
			t.Fatal(err)
		}
		// Clients reconnect to the same address, with the same data.
		if _, err := controlplanetest.Clientset(cp.Config()).CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	_ = testRestart
}

// Each test runs an operator of its own, scoped to the test's namespace:
// the package's tests share the control plane, and a cluster-wide operator
// of one test would handle the objects of the others. An operator that
// returns once started runs under t.Context(), which ends before the
// control plane stops; one whose Run blocks goes to Run, whose cleanup
// waits for it to return. (Compiled only: an example has no *testing.T.)
func ExampleRun() {
	testOperator := func(t *testing.T) {
		ns := controlplanetest.Namespace(t, cp.Config())
		f, err := generic.NewFactoryFromConfig(cp.Config(), nil, &generic.FactoryOptions{
			Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}},
		})
		if err != nil {
			t.Fatal(err)
		}
		// register(t.Context(), f): the operator's handlers
		if err := f.Start(t.Context(), 2); err != nil {
			t.Fatal(err)
		}

		// An operator whose Run blocks until its context ends and then
		// stops its event loop and KV scheduler (op.Run):
		controlplanetest.Run(t, func(ctx context.Context) error {
			<-ctx.Done()
			return nil
		})
		// ... create objects in ns and wait for the operator's work ...
	}
	_ = testOperator
}
