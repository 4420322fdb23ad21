package operator_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/examples/webapp/operator"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	controlplanetest.Main(m, controlplane.Options{CRDDirs: []string{"../../../crds"}}, &cp)
}

// startOperator builds an operator from opts and runs it until the test
// ends or stop is called; stop returns what Run returned.
func startOperator(t *testing.T, opts operator.Options) (op *operator.Operator, stop func() error) {
	t.Helper()
	op, err := operator.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return op, stop
}

// waitForReason polls the API server until the WebApp's Ready condition
// has reason, and returns the WebApp; after timeout it fails with what it
// saw last.
func waitForReason(ctx context.Context, c democtl.WebAppClient, ns, name, reason string, timeout time.Duration) (*demov1.WebApp, error) {
	var app *demov1.WebApp
	var err error
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		app, err = c.Get(ctx, ns, name, metav1.GetOptions{})
		if err == nil && operator.Ready.Reason(app.Status.Conditions) == reason {
			return app, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("WebApp %s/%s did not reach %s: %w", ns, name, reason, err)
	}
	return nil, fmt.Errorf("WebApp %s/%s did not reach %s: Ready is %+v", ns, name, reason, operator.Ready.Get(app.Status.Conditions))
}
