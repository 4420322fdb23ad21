package leader_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// BenchmarkTakeover measures how long a standby takes to start leading
// (its function called) after the leader's context ended (release on
// cancel) or after the leader was cut off from the API server (the lease
// must expire), with the tests' timings: lease 2 s, renew deadline 1 s,
// retry period 250 ms. Reported as ms/takeover, the mean over b.N.
func BenchmarkTakeover(b *testing.B) {
	for _, c := range []struct {
		name string
		cut  bool
	}{{"cancel", false}, {"cut-off", true}} {
		b.Run(c.name, func(b *testing.B) {
			var total time.Duration
			for range b.N {
				total += takeover(b, c.cut)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/takeover")
		})
	}
}

// takeover starts two candidates, ends or cuts off the leader, and returns
// the time until the other's function was called.
func takeover(b *testing.B, cut bool) time.Duration {
	ns := controlplanetest.Namespace(b, cp.Config())
	opts := []leader.Option{leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
		leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger())}
	type candidate struct {
		e      *leader.Elector
		proxy  *controlplanetest.Proxy
		led    chan time.Time
		cancel context.CancelFunc
		done   chan struct{}
	}
	start := func(id string) *candidate {
		proxy, cfg := controlplanetest.NewProxy(b, cp.Config())
		cfg.Timeout = renewDeadline
		e, err := leader.New(kubernetes.NewForConfigOrDie(cfg).CoordinationV1(), ns, "lease", append(opts, leader.WithIdentity(id))...)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		c := &candidate{e: e, proxy: proxy, led: make(chan time.Time, 4), cancel: cancel, done: make(chan struct{})}
		go func() {
			defer close(c.done)
			_ = e.Run(ctx, func(ctx context.Context) error {
				c.led <- time.Now()
				<-ctx.Done()
				return nil
			})
		}()
		return c
	}
	first := start("first")
	<-first.led
	second := start("second")
	for second.e.Leader() != "first" {
		time.Sleep(10 * time.Millisecond)
	}
	ended := time.Now()
	if cut {
		first.proxy.Cut()
	} else {
		first.cancel()
	}
	led := <-second.led
	first.cancel()
	second.cancel()
	<-first.done
	<-second.done
	return led.Sub(ended)
}
