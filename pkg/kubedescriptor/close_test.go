package kubedescriptor_test

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestCloseCancelsTheRequestInFlight closes the scheduler while a Create is
// stuck in a request the API server does not answer (a stalled proxy): the
// request follows the Create's context, which ends when Close begins, so
// Close returns at once, without waiting for the request's own timeout or
// abandoning the call.
func TestCloseCancelsTheRequestInFlight(t *testing.T) {
	proxy, s, ns := behindProxy(t, kvscheduler.Options{}, nil)
	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"k": "v"}}
	}
	// One value through the proxy first, so that discovery is done.
	commit(t, s.StartNBTransaction().SetValue(kubedescriptor.KeyFor(configMapKind, ns, "first"), cm("first")))

	held := proxy.Stall()
	committed := make(chan error, 1)
	stuck := kubedescriptor.KeyFor(configMapKind, ns, "stuck")
	go func() {
		_, err := s.StartNBTransaction().SetValue(stuck, cm("stuck")).Commit(t.Context())
		committed <- err
	}()
	<-held // the Create's request is on its way and will get no answer

	began := time.Now()
	if err := s.Close(); err != nil {
		t.Fatalf("Close after %v: %v", time.Since(began), err)
	}
	if err := <-committed; err != nil && !errors.Is(err, kvscheduler.ErrClosed) {
		var te *kvscheduler.TransactionError
		if !errors.As(err, &te) {
			t.Fatalf("Commit of the stuck value: %v", err)
		}
	}
	if st := s.GetValueStatus(stuck); st.State == kvscheduler.Configured {
		t.Fatalf("%s is CONFIGURED, though its request never reached the API server", stuck)
	}
}

// TestCloseCancelsTheDryRunOfUpdateWithRecreate closes the scheduler while
// UpdateWithRecreate (Options.RecreateOnImmutable) waits for its
// server-side dry run, which the API server does not answer: that
// callback gets no context, so the request follows Options.Context (the
// scheduler's), and Close returns without waiting for the request's
// timeout or abandoning the call.
func TestCloseCancelsTheDryRunOfUpdateWithRecreate(t *testing.T) {
	proxy, s, ns := behindProxy(t, kvscheduler.Options{CloseTimeout: 5 * time.Second}, func(s *kvscheduler.Scheduler, o *kubedescriptor.Options) {
		o.RecreateOnImmutable, o.Context = true, s.Context()
	})
	key := kubedescriptor.KeyFor(configMapKind, ns, "changing")
	cm := func(v string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "changing", Namespace: ns}, Data: map[string]string{"k": v}}
	}
	commit(t, s.StartNBTransaction().SetValue(key, cm("1")))

	held := proxy.Stall()
	go func() { _, _ = s.StartNBTransaction().SetValue(key, cm("2")).Commit(t.Context()) }()
	<-held // the dry run of the change is on its way and will get no answer
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
