package operator_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/examples/webapp/operator"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// runs counts benchmark runs, to give each its own node ports.
var runs atomic.Int32

// benchmarkConverge measures, on the real API server, the time from
// creating n WebApps to all of them being reported Ready: every event
// through the loop, every object applied by the scheduler, every status
// written. With chain set, WebApp i depends on WebApp i-1, so they become
// available one after another, each waiting for the previous one's
// objects to come back through the informers.
// The probe (probe_test.go) adds metrics of where the time goes.
func benchmarkConverge(b *testing.B, n int, chain bool) {
	p := convergeProbe{chain: chain}
	benchmarkConvergeWith(b, n, chain, p.start, p.converged)
	p.report(b)
}

// benchmarkConvergeWith is benchmarkConverge with the WebApps' children
// kept by what start runs; converged (if not nil) is told, with the timer
// stopped, when each run started, when each of its WebApps was created
// and when all of them were ready.
func benchmarkConvergeWith(b *testing.B, n int, chain bool,
	start func(b testing.TB, ctx context.Context, ns string, r operator.PortRange) (democtl.WebAppController, func() error),
	converged func(start time.Time, created []time.Time, end time.Time)) {
	for range b.N {
		b.StopTimer()
		ns := controlplanetest.Namespace(b, cp.Config())
		ctx, cancel := context.WithCancel(context.Background())
		// Node ports are cluster-wide and Services outlive their
		// namespace here (no controller manager): each run gets a range of
		// its own.
		first := int32(30100 + (runs.Add(1)%24)*100)
		webapps, wait := start(b, ctx, ns, operator.PortRange{First: first, Last: first + int32(n) - 1})
		if _, err := webapps.List(ctx, ns, metav1.ListOptions{}); err != nil {
			b.Fatal(err)
		}
		created := make([]time.Time, n)
		b.StartTimer()
		start := time.Now()
		for j := range n {
			app := &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%03d", j), Namespace: ns},
				Spec: demov1.WebAppSpec{Image: "nginx", Replicas: ptr.To[int32](1), Port: 80}}
			if chain && j > 0 {
				app.Spec.DependsOn = []string{fmt.Sprintf("app-%03d", j-1)}
			}
			if _, err := webapps.Create(ctx, app); err != nil {
				b.Fatal(err)
			}
			created[j] = time.Now()
		}
		for ready := 0; ready < n; time.Sleep(5 * time.Millisecond) {
			apps, err := webapps.Cache().List(ns, labels.Everything())
			if err != nil {
				b.Fatal(err)
			}
			ready = 0
			for _, app := range apps {
				if operator.Ready.IsTrue(app.Status.Conditions) {
					ready++
				}
				if operator.Ready.Reason(app.Status.Conditions) == operator.ReasonFailed {
					b.Fatalf("%s failed: %s", app.Name, operator.Ready.Message(app.Status.Conditions))
				}
			}
			if time.Since(start) > 5*time.Minute {
				b.Fatalf("%d of %d ready after 5 minutes", ready, n)
			}
		}
		b.StopTimer()
		end := time.Now()
		b.ReportMetric(float64(n)/end.Sub(start).Seconds(), "webapps/s")
		if converged != nil {
			converged(start, created, end)
		}
		cancel()
		if err := wait(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkConverge100 creates 100 independent WebApps.
func BenchmarkConverge100(b *testing.B) { benchmarkConverge(b, 100, false) }

// BenchmarkConvergeChain100 creates a chain of 100 WebApps, each depending
// on the one before.
func BenchmarkConvergeChain100(b *testing.B) { benchmarkConverge(b, 100, true) }
