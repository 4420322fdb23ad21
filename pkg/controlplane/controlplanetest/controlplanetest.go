// Package controlplanetest starts a real control plane for one test and stops
// it when the test ends, the way net/http/httptest does for HTTP servers.
package controlplanetest

import (
	"context"
	"testing"

	"github.com/lariat-dev/lariat/pkg/controlplane"
)

// Start starts a control plane with opts for t and registers its Stop with
// t.Cleanup. It fails the test at once when the control plane cannot start;
// the error says why (for example, that `make controlplane` has to be run).
// When the test fails, the last lines of the API server's log are logged.
func Start(t testing.TB, opts controlplane.Options) *controlplane.ControlPlane {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	cp, err := controlplane.Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("start control plane: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kube-apiserver log tail:\n%s", cp.APIServerLogTail(30))
		}
		if err := cp.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	return cp
}
