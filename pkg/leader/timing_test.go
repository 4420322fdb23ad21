package leader_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestTakeoverCountsFromTheLastRenewal: with the tightest timings New
// accepts of the kind (2 s lease, 1.9 s renew deadline, 250 ms retry
// period), a standby must count the lease duration from the leader's last
// renewal, not from an earlier one in the same second. The leader is cut
// off from its lease right after a renewal sent at least 700 ms after the
// standby first saw a renewTime in that same second; its work keeps
// writing through its fence. Every write the fence let through must have
// been issued before the standby acquired the lease.
func TestTakeoverCountsFromTheLastRenewal(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	const renew = 1900 * time.Millisecond
	cms := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "w"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a, b := &writer{name: "a"}, &writer{name: "b"}
	var (
		mu  sync.Mutex
		cut time.Time // the sending time of a's last renewal
	)
	a.tap.onRenewed = func(renewTime, sent time.Time) {
		first, ok := b.tap.firstOfLatestSecond()
		if !ok || renewTime.Unix() != first.renew.Unix() || !renewTime.After(first.renew) || sent.Sub(first.at) < 700*time.Millisecond {
			return
		}
		a.tap.cutOff()
		mu.Lock()
		cut = sent
		mu.Unlock()
	}
	a.start(t, ns, renew)
	eventually(t, "a leading", a.e.Holding)
	b.start(t, ns, renew)
	// The coincidence depends on where the renewals fall in the second;
	// on a loaded machine it can take many seconds to come, so it gets a
	// longer bound than the package's (a liveness bound, not a timing).
	controlplanetest.Eventually(t, 3*time.Minute, "a cut off after a renewal late in a second the standby saw begin", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !cut.IsZero()
	})
	eventually(t, "b leading", b.e.Holding)
	eventually(t, "a's fence closed", func() bool { return !a.e.Holding() })

	if !b.tap.sawSubSecond() {
		t.Fatal("every renewTime the standby read was in whole seconds: the API server does not keep a Lease's renewTime to the microsecond")
	}
	acquired := b.renews.First()
	last := a.lastWrite()
	mu.Lock()
	renewed := cut
	mu.Unlock()
	t.Logf("a's last renewal sent at +0, its last write at %v, b acquired at %v", last.Sub(renewed), acquired.Sub(renewed))
	if !last.Before(acquired) {
		t.Errorf("the old leader wrote %v after the new leader acquired the lease (%v after its last renewal; renew deadline %v, lease duration %v)",
			last.Sub(acquired), acquired.Sub(renewed), renew, leaseDuration)
	}
}

// writer is a replica whose work patches one ConfigMap every 10 ms through
// its Elector's fence until its term ends, recording when each write the
// fence let through was issued.
type writer struct {
	name   string
	e      *leader.Elector
	tap    leaseTap
	renews controlplanetest.WriteLog

	mu     sync.Mutex
	writes []time.Time
}

func (w *writer) start(t *testing.T, ns string, renew time.Duration) {
	t.Helper()
	leaseCfg := w.renews.Wrap(w.tap.wrap(cp.Config()), true)
	leaseCfg.Timeout = renew
	e, err := leader.New(kubernetes.NewForConfigOrDie(leaseCfg).CoordinationV1(), ns, "lease",
		leader.WithIdentity(w.name), leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renew),
		leader.WithRetryPeriod(retryPeriod), leader.WithLogger(controlplanetest.QuietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	w.e = e
	dataCfg := e.Fence(cp.Config())
	// Outermost: the time is taken before the fence decides, and kept
	// only for writes it let through.
	dataCfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			issued := time.Now()
			resp, err := next.RoundTrip(req)
			if nl := (*leader.NotLeaderError)(nil); req.Method != http.MethodGet && !errors.As(err, &nl) {
				w.mu.Lock()
				w.writes = append(w.writes, issued)
				w.mu.Unlock()
			}
			return resp, err
		})
	})
	cms := kubernetes.NewForConfigOrDie(dataCfg).CoreV1().ConfigMaps(ns)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- e.Run(ctx, func(ctx context.Context) error {
			for ctx.Err() == nil {
				// The request does not carry the term's context: only
				// the fence stops it.
				patch := []byte(`{"metadata":{"annotations":{"by":"` + w.name + `"}}}`)
				_, _ = cms.Patch(t.Context(), "w", types.MergePatchType, patch, metav1.PatchOptions{})
				select {
				case <-ctx.Done():
				case <-time.After(10 * time.Millisecond):
				}
			}
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func (w *writer) lastWrite() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, x := range w.writes {
		if x.After(last) {
			last = x
		}
	}
	return last
}

// seenRenew is a renewTime a replica read, and when the read returned.
type seenRenew struct{ renew, at time.Time }

// leaseTap watches one replica's lease client: the renewTime of every
// lease it read, a callback after each accepted update (its renewTime and
// when it was sent), and a switch that cuts the client off.
type leaseTap struct {
	mu        sync.Mutex
	cut       bool
	reads     []seenRenew
	onRenewed func(renewTime, sent time.Time)
}

func (l *leaseTap) cutOff() {
	l.mu.Lock()
	l.cut = true
	l.mu.Unlock()
}

// firstOfLatestSecond returns the first read, in the latest run of reads
// whose renewTimes fell in one second: the read at which a client that
// compares renewTimes in whole seconds last saw the lease change.
func (l *leaseTap) firstOfLatestSecond() (seenRenew, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.reads) == 0 {
		return seenRenew{}, false
	}
	i := len(l.reads) - 1
	for i > 0 && l.reads[i-1].renew.Unix() == l.reads[i].renew.Unix() {
		i--
	}
	return l.reads[i], i > 0 // a run from the first read may have begun earlier
}

func (l *leaseTap) sawSubSecond() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.reads {
		if r.renew.Nanosecond() != 0 {
			return true
		}
	}
	return false
}

func (l *leaseTap) wrap(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.ContentType, c.AcceptContentTypes = "application/json", "application/json"
	c.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			l.mu.Lock()
			cut := l.cut
			l.mu.Unlock()
			if cut {
				return nil, errors.New("cut off from the lease")
			}
			var sentBody []byte
			if req.Method == http.MethodPut && req.Body != nil {
				sentBody, _ = io.ReadAll(req.Body)
				req.Body.Close()
				req.Body = io.NopCloser(bytes.NewReader(sentBody))
			}
			sent := time.Now()
			resp, err := next.RoundTrip(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				return resp, err
			}
			switch req.Method {
			case http.MethodPut:
				if renew, ok := renewTimeOf(sentBody); ok && l.onRenewed != nil {
					l.onRenewed(renew, sent)
				}
			case http.MethodGet:
				body, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				resp.Body = io.NopCloser(bytes.NewReader(body))
				if renew, ok := renewTimeOf(body); ok && rerr == nil {
					l.mu.Lock()
					l.reads = append(l.reads, seenRenew{renew: renew, at: time.Now()})
					l.mu.Unlock()
				}
			}
			return resp, nil
		})
	})
	return c
}

func renewTimeOf(body []byte) (time.Time, bool) {
	var l struct {
		Spec struct {
			RenewTime *metav1.MicroTime `json:"renewTime"`
		} `json:"spec"`
	}
	if json.Unmarshal(body, &l) != nil || l.Spec.RenewTime == nil {
		return time.Time{}, false
	}
	return l.Spec.RenewTime.Time, true
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
