package dashboard_test

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/sirupsen/logrus"
	"k8s.io/klog/v2"

	"github.com/lariat-dev/lariat/pkg/controlplane"
)

// cluster is the control plane of the tests that need one, started by the
// first of them: most tests of the package need none and do not wait for
// one.
var cluster struct {
	sync.Mutex
	cp  *controlplane.ControlPlane
	err error
}

// controlPlane returns the package's control plane, started on first use.
func controlPlane(t *testing.T) *controlplane.ControlPlane {
	t.Helper()
	cluster.Lock()
	defer cluster.Unlock()
	if cluster.cp == nil && cluster.err == nil {
		l := logrus.New()
		l.SetLevel(logrus.WarnLevel)
		cluster.cp, cluster.err = controlplane.Start(context.Background(), controlplane.Options{Logger: l})
	}
	if cluster.err != nil {
		t.Fatalf("start the control plane: %v", cluster.err)
	}
	return cluster.cp
}

func TestMain(m *testing.M) {
	// client-go logs leader elections through klog; the tests' assertions
	// say what matters.
	klog.SetLogger(logr.Discard())
	code := m.Run()
	cluster.Lock()
	if cluster.cp != nil {
		if err := cluster.cp.Stop(); err != nil && code == 0 {
			code = 1
		}
	}
	cluster.Unlock()
	os.Exit(code)
}
