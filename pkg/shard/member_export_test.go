package shard

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lariat-dev/lariat/pkg/controlplane"
)

// ControlPlaneForTests gives the external test package (shard_test, where
// the member tests live) the control plane that TestMain started.
func ControlPlaneForTests() *controlplane.ControlPlane { return cp }

// MetricSum gives the member tests the sharder tests' reader of metrics: the
// sum of the samples of name in reg whose labels include labels (-1 if there
// is none).
func MetricSum(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	return metricSum(t, reg, name, labels)
}
