package kvscheduler_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

func TestWatchSlowSubscriber(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("a", "a/"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := s.WatchValueStatus(ctx, func(k string) bool { return strings.HasPrefix(k, "a/") })
	other := s.WatchValueStatus(context.Background(), nil)
	other.Close()
	const n = 50
	for i := 0; i < n; i++ {
		mustSet(t, s, fmt.Sprintf("a/%d", i), "x", "b/1", i)
	}
	// Nobody read so far: the latest status of every key is still delivered.
	latest := map[string]kvscheduler.ValueState{}
	for len(latest) < n {
		st := <-w.C()
		latest[st.Key] = st.State
	}
	for k, st := range latest {
		if st != kvscheduler.Configured {
			t.Fatalf("%s: %s", k, st)
		}
	}
	txn := s.StartNBTransaction()
	for i := 0; i < n; i++ {
		txn.SetValue(fmt.Sprintf("a/%d", i), nil)
	}
	if _, err := txn.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	removed := 0
	for removed < n {
		if st := <-w.C(); st.State == kvscheduler.Removed {
			removed++
		}
	}
	cancel()
	for range w.C() {
	}
	if _, ok := <-other.C(); ok {
		t.Fatal("closed watch delivered")
	}
}

func TestWatchSeesMissingValueRepaired(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	a := sb.Descriptor("a", "a/")
	create := a.Create
	gate := make(chan struct{})
	repairing := false
	a.Create = func(ctx context.Context, k string, v any) (any, error) {
		if repairing {
			<-gate // hold the repair until the watcher saw MISSING
		}
		return create(ctx, k, v)
	}
	register(t, s, a)
	mustSet(t, s, "a/1", "x")
	repairing = true
	w := s.WatchValueStatus(context.Background(), nil)
	defer w.Close()
	sb.Remove("a/1")
	done := make(chan error, 1)
	go func() {
		_, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(context.Background())
		done <- err
	}()
	if st := <-w.C(); st.State != kvscheduler.Missing {
		t.Fatalf("first status %+v", st)
	}
	close(gate)
	if st := <-w.C(); st.State != kvscheduler.Configured {
		t.Fatalf("second status %+v", st)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A watch selector is user code run on the scheduler's goroutine: when it
// panics, the watch ends with an error wrapping ErrPanic, and the
// scheduler and the other watches go on.
func TestWatchSelectorPanicEndsOnlyThatWatch(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, sb.Descriptor("x", "x/"))
	bad := s.WatchValueStatus(context.Background(), func(k string) bool {
		if k == "x/2" {
			panic("bad selector")
		}
		return true
	})
	good := s.WatchValueStatus(context.Background(), nil)
	defer good.Close()
	mustSet(t, s, "x/1", "a")
	mustSet(t, s, "x/2", "b")
	for range bad.C() { // x/1's statuses, then the channel closes
	}
	if err := bad.Err(); !errors.Is(err, kvscheduler.ErrPanic) || !strings.Contains(err.Error(), `"x/2"`) {
		t.Fatalf("Err of the watch whose selector panicked on x/2: %v, want ErrPanic naming x/2", err)
	}
	mustSet(t, s, "x/3", "c")
	for st := range good.C() {
		if st.Key == "x/3" && st.State == kvscheduler.Configured {
			break
		}
	}
	if err := good.Err(); err != nil {
		t.Errorf("the other watch has error %v", err)
	}
}
