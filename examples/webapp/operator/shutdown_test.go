package operator_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/examples/webapp/operator"
	demo "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestStoppingTheOperatorIsQuiet cancels the operator's context while its
// WebApps keep changing, so that the bridge, the event loop, the scheduler
// and the controllers all have work in flight: stopping is not a failure,
// and nothing may be logged at warning level or above once it began.
func TestStoppingTheOperatorIsQuiet(t *testing.T) {
	ctx := t.Context()
	ns := controlplanetest.Namespace(t, cp.Config())
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.InfoLevel)
	op, err := operator.New(operator.Options{Config: cp.Config(), Logger: log, Namespace: ns,
		NodePorts: operator.PortRange{First: 32200, Last: 32299}})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- op.Run(runCtx) }()

	demoFactory, err := demo.NewFactoryFromConfig(cp.Config())
	if err != nil {
		t.Fatal(err)
	}
	webapps, err := demoFactory.Demo().V1().WebApp()
	if err != nil {
		t.Fatal(err)
	}
	const apps = 8
	for i := range apps {
		app := &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%d", i), Namespace: ns},
			Spec: demov1.WebAppSpec{Image: "nginx", Replicas: ptr.To[int32](1), Port: 80}}
		if i > 0 {
			app.Spec.DependsOn = []string{fmt.Sprintf("app-%d", i-1)}
		}
		if _, err := webapps.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	for i := range apps {
		if _, err := waitForReason(ctx, webapps, ns, fmt.Sprintf("app-%d", i), operator.ReasonAvailable, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if entries := warnings(hook); len(entries) > 0 {
		t.Fatalf("logged before stopping: %v", entries)
	}

	// Keep every WebApp changing: each change goes through the bridge, the
	// loop, the scheduler (a Deployment patch) and the status handler.
	changing, stopChanging := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var changes sync.WaitGroup
	changes.Add(apps)
	for i := range apps {
		wg.Go(func() {
			first := true
			for r := int32(2); changing.Err() == nil; r++ {
				app, err := webapps.Get(changing, ns, fmt.Sprintf("app-%d", i), metav1.GetOptions{})
				if err != nil {
					continue
				}
				app.Spec.Replicas = ptr.To(r)
				if _, err := webapps.Update(changing, app); err == nil && first {
					first = false
					changes.Done()
				}
			}
		})
	}
	changes.Wait()
	// The changes are on their way through the operator: stop it now.
	hook.Reset()
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	stopChanging()
	wg.Wait()
	if entries := warnings(hook); len(entries) > 0 {
		t.Fatalf("stopping the operator logged %d warnings or errors:\n%s", len(entries), strings.Join(entries, "\n"))
	}
	if err := op.Loop().Health(); err == nil {
		t.Fatal("the loop is still healthy after Run returned")
	}
}

// warnings formats the entries at warning level or above.
func warnings(hook *logtest.Hook) []string {
	var out []string
	for _, e := range hook.AllEntries() {
		if e.Level <= logrus.WarnLevel {
			out = append(out, fmt.Sprintf("%s: %s %v", e.Level, e.Message, e.Data))
		}
	}
	return out
}
