package operator_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/examples/webapp/operator"
	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// convergeProbe measures where a Converge benchmark's wall time goes
// (issue 29, "parallel apply"): the scheduler transactions it runs, the
// southbound operations of each, and the time spent in the API requests
// the scheduler's Kubernetes descriptors make. It only watches: the
// operator runs as in the benchmark, with a transport that notes the
// start and end of each request to the three kinds the scheduler applies.
// The benchmark's ns/op is unchanged in meaning; the probe adds metrics.
type convergeProbe struct {
	// chain is set for a chain of WebApps: modelRun, which takes them as
	// independent, is then not run.
	chain bool
	mu    sync.Mutex
	calls []apiCall
	sched *kvscheduler.Scheduler

	runs                               int
	wall, creating, inTxn, write, read time.Duration
	inTxnNoWrites                      time.Duration // of transactions without Kubernetes writes
	dry                                time.Duration
	txns, writes, dryRuns              int
	reads                              int
	saved                              time.Duration
	model                              map[int]time.Duration // by batch size: modelRun's wall time
	byType                             map[kvscheduler.TxnType]int
	opsHist, appsHist                  map[int]int
	otherHist                          map[string]int // Kubernetes writes and availability marker operations of a transaction
}

// apiCall is one request to the ConfigMaps, Deployments or Services. All
// of them are the scheduler's descriptors' (the operator's informers only
// list and watch, which are not noted), and they are counted when they
// start inside a transaction.
type apiCall struct {
	start, end time.Time
	kind       string // "write", "dry" (a dry run) or "read" (a GET that is no watch)
}

// start runs the operator on ns with node ports r until ctx ends, its
// requests through the probe's transport; wait returns what its Run
// returned. The scheduler is kept for converged.
func (p *convergeProbe) start(b testing.TB, ctx context.Context, ns string, r operator.PortRange) (democtl.WebAppController, func() error) {
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return probeTransport{p: p, next: next} })
	op, err := operator.New(operator.Options{Config: cfg, Namespace: ns, Logger: log, NodePorts: r})
	if err != nil {
		b.Fatal(err)
	}
	p.mu.Lock()
	p.sched, p.calls = op.Scheduler(), nil
	p.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	return op.WebApps(), func() error { return <-done }
}

// probeTransport notes the requests to the scheduler's kinds.
type probeTransport struct {
	p    *convergeProbe
	next http.RoundTripper
}

// RoundTrip passes the request on and notes its times.
func (t probeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	path, q := req.URL.Path, req.URL.Query()
	kind := ""
	if strings.Contains(path, "/configmaps") || strings.Contains(path, "/deployments") || strings.Contains(path, "/services") {
		switch {
		case req.Method == http.MethodGet && q.Get("watch") == "":
			kind = "read"
		case req.Method == http.MethodGet:
		case q.Has("dryRun"):
			kind = "dry"
		default:
			kind = "write"
		}
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	if kind != "" {
		t.p.mu.Lock()
		t.p.calls = append(t.p.calls, apiCall{start: start, end: time.Now(), kind: kind})
		t.p.mu.Unlock()
	}
	return resp, err
}

// converged adds the run that went from start to end to the totals;
// created are the times the benchmark's creates of the WebApps returned.
func (p *convergeProbe) converged(start time.Time, created []time.Time, end time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byType == nil {
		p.byType, p.opsHist, p.appsHist, p.otherHist = map[kvscheduler.TxnType]int{}, map[int]int{}, map[int]int{}, map[string]int{}
	}
	p.runs++
	p.wall += end.Sub(start)
	p.creating += created[len(created)-1].Sub(start)
	calls := p.calls
	var runTxn, runSB time.Duration
	for _, rec := range p.sched.TransactionHistory(start, end) {
		p.txns++
		p.byType[rec.Type]++
		p.inTxn += rec.Stop.Sub(rec.Start)
		runTxn += rec.Stop.Sub(rec.Start)
		// Southbound operations of the Kubernetes descriptors, and the
		// longest run of them on one WebApp (its objects depend on each
		// other: ConfigMap, Deployment, Service), the least that
		// parallelism inside the transaction leaves in series.
		ops, other, perApp := 0, 0, map[string]int{}
		for _, op := range rec.Executed {
			if op.NOOP || op.Property {
				continue
			}
			if strings.HasPrefix(op.Key, operator.AvailablePrefix) {
				other++
				continue
			}
			ops++
			parts := strings.Split(op.Key, "/")
			perApp[strings.Join(parts[max(0, len(parts)-2):], "/")]++
		}
		p.opsHist[ops]++
		p.otherHist[fmt.Sprintf("%d writes + %d markers", ops, other)]++
		if ops == 0 {
			p.inTxnNoWrites += rec.Stop.Sub(rec.Start)
		}
		p.appsHist[len(perApp)]++
		var sb time.Duration
		for _, c := range calls {
			if c.start.Before(rec.Start) || c.start.After(rec.Stop) {
				continue
			}
			// A create is a GET and an apply (kubedescriptor's write):
			// both are time inside the southbound call.
			sb += c.end.Sub(c.start)
			switch c.kind {
			case "write":
				p.writes++
				p.write += c.end.Sub(c.start)
			case "dry":
				p.dryRuns++
				p.dry += c.end.Sub(c.start)
			case "read":
				p.reads++
				p.read += c.end.Sub(c.start)
			}
		}
		runSB += sb
		if ops > 0 {
			depth := slices.Max(slices.Collect(maps.Values(perApp)))
			p.saved += sb - sb*time.Duration(depth)/time.Duration(ops)
		}
	}
	p.calls = nil
	if !p.chain {
		p.modelRun(start, created, runTxn, runSB)
	}
}

// modelBatch is the most WebApps modelRun takes into one transaction: the
// per-descriptor bound the issue suggests for Kubernetes descriptors.
const modelBatch = 16

// modelRun replays the run's WebApp events through a model of the loop
// fed with this run's measurements, once serially (one WebApp per
// transaction, to check the model against the measured wall time) and
// once with the events queued when a transaction starts taken into it
// together, up to modelBatch, their chains overlapping. Per WebApp, a
// transaction costs the run's average time outside API calls (not
// overlapped: the scheduler's and the descriptors' CPU) plus, once per
// transaction, the average time in API calls of one WebApp (its chain of
// three creates, each a GET and an apply). It leaves out the time between
// transactions and assumes the API server answers as fast with
// modelBatch requests in flight: an optimistic bound.
func (p *convergeProbe) modelRun(start time.Time, created []time.Time, inTxn, sbCalls time.Duration) {
	n := len(created)
	if p.model == nil {
		p.model = map[int]time.Duration{}
	}
	cpu := (inTxn - sbCalls) / time.Duration(n)
	chain := sbCalls / time.Duration(n)
	for _, batch := range []int{1, modelBatch} {
		var t time.Duration
		for i := 0; i < n; {
			if a := created[i].Sub(start); a > t {
				t = a
			}
			k := 0
			for i+k < n && k < batch && created[i+k].Sub(start) <= t {
				k++
			}
			t += time.Duration(k)*cpu + chain
			i += k
		}
		p.model[batch] += t
	}
}

// report adds the metrics (per run) and logs the histograms.
func (p *convergeProbe) report(b *testing.B) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runs == 0 {
		return
	}
	n := float64(p.runs)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / n }
	b.ReportMetric(float64(p.txns)/n, "txns/op")
	b.ReportMetric(float64(p.writes)/n, "sbwrites/op")
	b.ReportMetric(ms(p.inTxn), "txn-ms/op")
	b.ReportMetric(ms(p.write+p.read+p.dry), "sbcall-ms/op")
	b.ReportMetric(ms(p.creating), "creating-ms/op")
	b.ReportMetric(ms(p.wall-p.saved), "bound-ms/op")
	b.Logf("runs %d, wall %.0f ms/run (creating the WebApps %.0f ms); in transactions %.0f ms (%.0f%% of wall); in API writes %.0f ms (%.0f%% of wall), %d writes/run, %.2f ms each; dry runs %d/run %.0f ms; reads %d/run %.0f ms",
		p.runs, ms(p.wall), ms(p.creating), ms(p.inTxn), 100*float64(p.inTxn)/float64(p.wall), ms(p.write), 100*float64(p.write)/float64(p.wall),
		p.writes/p.runs, float64(p.write)/float64(time.Millisecond)/float64(max(1, p.writes)), p.dryRuns/p.runs, ms(p.dry), p.reads/p.runs, ms(p.read))
	b.Logf("transactions by type: %s", histText(p.byType))
	b.Logf("southbound writes per transaction (ops: transactions): %s", histText(p.opsHist))
	b.Logf("WebApps per transaction: %s", histText(p.appsHist))
	b.Logf("Kubernetes writes and availability marker operations per transaction: %s; transactions without Kubernetes writes took %.0f ms",
		histText(p.otherHist), ms(p.inTxnNoWrites))
	if p.chain {
		return
	}
	b.ReportMetric(ms(p.model[modelBatch]), "model-batched-ms/op")
	b.Logf("model of the loop (see modelRun): serial %.0f ms (measured wall %.0f ms), events queued at a transaction's start taken together (up to %d) %.0f ms (%.2fx the model's serial)",
		ms(p.model[1]), ms(p.wall), modelBatch, ms(p.model[modelBatch]), float64(p.model[modelBatch])/float64(p.model[1]))
	b.Logf("unbounded parallelism inside each transaction (its WebApps' chains overlap) would save at most %.0f ms of %.0f ms (wall %.2fx)",
		ms(p.saved), ms(p.wall), float64(p.wall-p.saved)/float64(p.wall))
}

// histText formats a histogram as "key: count" in key order.
func histText[K int | kvscheduler.TxnType | string](h map[K]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(h)) {
		parts = append(parts, fmt.Sprintf("%v: %d", k, h[k]))
	}
	return strings.Join(parts, ", ")
}
