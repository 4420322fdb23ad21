package kubedescriptor_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestRestartDryRunsGoTogether: a restarted operator's descriptor has no
// record of its applies, so its first resync stands a server-side dry run
// in for each object it finds. Those dry runs are sent together (up to a
// bound), not one round trip after another: the first one sent here waits
// for a second to arrive (for at most 5 s, once), and the resync must find
// every object in sync.
func TestRestartDryRunsGoTogether(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	const n = 8
	values := func(txn *kvscheduler.Txn) *kvscheduler.Txn {
		for i := range n {
			name := fmt.Sprintf("cfg-%d", i)
			txn.SetValue(kubedescriptor.KeyFor(configMapKind, ns, name), &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"k": "v"}})
		}
		return txn
	}
	commit(t, values(scheduler(t, configMapKind, kubedescriptor.Options{Namespace: ns}).StartNBTransaction()))

	var inFlight, most atomic.Int32
	var waited atomic.Bool
	second := make(chan struct{})
	var secondOnce sync.Once
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method != http.MethodPatch || req.URL.Query().Get("dryRun") == "" {
				return next.RoundTrip(req)
			}
			cur := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := most.Load(); cur > m && !most.CompareAndSwap(m, cur); m = most.Load() {
			}
			if cur >= 2 {
				secondOnce.Do(func() { close(second) })
			}
			if !waited.Swap(true) {
				select {
				case <-second:
				case <-time.After(5 * time.Second):
				}
			}
			return next.RoundTrip(req)
		})
	})
	clients, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	restarted := scheduler(t, configMapKind, kubedescriptor.Options{Clients: clients, Namespace: ns})
	rec := commit(t, values(restarted.StartNBTransaction().WithResync(kvscheduler.FullResync)))
	if ops := executed(rec); len(ops) > 0 {
		t.Errorf("the restart's resync found objects out of sync: %v", ops)
	}
	if m := most.Load(); m < 2 {
		t.Errorf("the restart's dry runs went one at a time (at most %d in flight)", m)
	}
}

// BenchmarkRestartResync100 measures the first full resync of a restarted
// operator's descriptor over 100 ConfigMaps it applied before: a read, and
// a server-side dry run per object standing in for the apply records the
// new process does not have.
func BenchmarkRestartResync100(b *testing.B) {
	ns := controlplanetest.Namespace(b, cp.Config())
	values := func(txn *kvscheduler.Txn) *kvscheduler.Txn {
		for i := range 100 {
			name := fmt.Sprintf("cfg-%d", i)
			txn.SetValue(kubedescriptor.KeyFor(configMapKind, ns, name), &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"k": "v"}})
		}
		return txn
	}
	commit(b, values(scheduler(b, configMapKind, kubedescriptor.Options{Namespace: ns}).StartNBTransaction()))
	for b.Loop() {
		b.StopTimer()
		s := scheduler(b, configMapKind, kubedescriptor.Options{Namespace: ns})
		txn := values(s.StartNBTransaction().WithResync(kvscheduler.FullResync))
		b.StartTimer()
		rec := commit(b, txn)
		if ops := executed(rec); len(ops) > 0 {
			b.Fatalf("the restart's resync found objects out of sync: %v", ops)
		}
	}
}
