package shard

import (
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// cp is the control plane every test of the package talks to.
var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	// client-go's leaderelection logs every attempt through klog; the
	// tests' assertions say what matters.
	klog.SetLogger(logr.Discard())
	controlplanetest.Main(m, controlplane.Options{}, &cp)
}
