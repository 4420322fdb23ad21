package kubedescriptor_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// hangGuard bounds waits that only a hang would exceed; the requests of
// these tests are allowed an hour.
const hangGuard = 30 * time.Second

// behindProxy returns a scheduler (closed at the end of the test) with the
// ConfigMap descriptor registered, talking to the API server through a
// proxy that can stall, and the test's namespace. The descriptor's request
// timeout is far beyond the test's, so only a callback's context (or
// Options.Context) ends a stalled request. edit, if given, adjusts the
// descriptor's options.
func behindProxy(t *testing.T, opts kvscheduler.Options, edit func(*kvscheduler.Scheduler, *kubedescriptor.Options)) (*controlplanetest.Proxy, *kvscheduler.Scheduler, string) {
	t.Helper()
	ns := controlplanetest.Namespace(t, cp.Config())
	proxy, proxied := controlplanetest.NewProxy(t, cp.Config())
	clients, err := client.NewSharedClientFactory(proxied, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := kvscheduler.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	o := kubedescriptor.Options{Clients: clients, FieldManager: fieldManager, Namespace: ns, Timeout: time.Hour}
	if edit != nil {
		edit(s, &o)
	}
	d, err := kubedescriptor.New(configMapKind, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterDescriptor(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	return proxy, s, ns
}

// TestCommitCancelEndsTheRequestInFlight cancels the context of a blocking
// Commit while its Create is stuck in a request the API server does not
// answer (a stalled proxy): the request ends with the Commit's context, so
// the Commit's error names the value and wraps context.Canceled, and the
// scheduler goes on at once instead of waiting for the request's timeout.
// Once the API server answers again, a resync applies the value.
func TestCommitCancelEndsTheRequestInFlight(t *testing.T) {
	proxy, s, ns := behindProxy(t, kvscheduler.Options{}, nil)
	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"k": "v"}}
	}
	// One value through the proxy first, so that discovery is done.
	commit(t, s.StartNBTransaction().SetValue(kubedescriptor.KeyFor(configMapKind, ns, "first"), cm("first")))

	held := proxy.Stall()
	stuck := kubedescriptor.KeyFor(configMapKind, ns, "stuck")
	ctx, cancel := context.WithCancel(t.Context())
	committed := make(chan error, 1)
	go func() {
		_, err := s.StartNBTransaction().SetValue(stuck, cm("stuck")).Commit(ctx)
		committed <- err
	}()
	<-held // the Create's request is on its way and will get no answer
	cancel()
	select {
	case err := <-committed:
		var te *kvscheduler.TransactionError
		if !errors.Is(err, context.Canceled) || !errors.As(err, &te) || !strings.Contains(err.Error(), stuck) {
			t.Fatalf("Commit: %v, want a *TransactionError wrapping context.Canceled that names %s", err, stuck)
		}
	case <-time.After(hangGuard):
		t.Fatal("Commit still waits for the stalled request after its context was cancelled")
	}
	// The scheduler's goroutine is free: a transaction with nothing to do
	// (no request) goes through while the proxy still stalls.
	done := make(chan error, 1)
	go func() {
		_, err := s.StartNBTransaction().Commit(t.Context())
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hangGuard):
		t.Fatal("the next transaction waits for the request of the canceled one")
	}
	if st := s.GetValueStatus(stuck); st.State == kvscheduler.Configured {
		t.Fatalf("%s is CONFIGURED, though its request was cancelled", stuck)
	}

	proxy.Resume()
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(t.Context()); err != nil {
		t.Fatalf("resync: %v", err)
	}
	if st := s.GetValueStatus(stuck); st.State != kvscheduler.Configured {
		t.Fatalf("%s after the resync: %+v, want CONFIGURED", stuck, st)
	}
}
