package shard

import "github.com/lariat-dev/lariat/pkg/controlplane"

// ControlPlaneForTests gives the external test package (shard_test, where
// the member tests live) the control plane that TestMain started.
func ControlPlaneForTests() *controlplane.ControlPlane { return cp }
