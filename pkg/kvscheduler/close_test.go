package kvscheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestCloseIsBoundedWhenADescriptorHangs closes a scheduler whose
// descriptor's Create never returns (it ignores the scheduler's context):
// Close gives up on the worker after CloseTimeout and says which call hung,
// and the transaction waiting for it ends too.
func TestCloseIsBoundedWhenADescriptorHangs(t *testing.T) {
	s, err := kvscheduler.New(kvscheduler.Options{CloseTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	never := make(chan struct{})
	defer close(never) // lets the abandoned goroutine end with the test
	entered := make(chan struct{})
	register(t, s, &kvscheduler.Descriptor{
		Name:        "stuck",
		NBKeyPrefix: "stuck/",
		KeySelector: func(k string) bool { return strings.HasPrefix(k, "stuck/") },
		Create: func(context.Context, string, any) (any, error) {
			close(entered)
			<-never
			return nil, nil
		},
		Delete: func(context.Context, string, any, any) error { return nil },
	})
	committed := make(chan error, 1)
	go func() {
		_, err := s.StartNBTransaction().SetValue("stuck/a", "v").Commit(context.Background())
		committed <- err
	}()
	<-entered

	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if !errors.Is(err, kvscheduler.ErrCloseTimeout) || !strings.Contains(err.Error(), `"stuck"`) ||
			!strings.Contains(err.Error(), "Create") || !strings.Contains(err.Error(), "stuck/a") {
			t.Fatalf("Close: %v, want ErrCloseTimeout naming the Create of stuck/a by descriptor \"stuck\"", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Close did not return while a descriptor call hung")
	}
	select {
	case err := <-committed:
		if !errors.Is(err, kvscheduler.ErrClosed) {
			t.Fatalf("Commit of the hung transaction: %v, want ErrClosed", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Commit of the hung transaction still waits after Close returned")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestContextIsCancelledOnClose checks that a descriptor call that follows
// the scheduler's Context ends when Close begins, so Close returns without
// abandoning anything.
func TestContextIsCancelledOnClose(t *testing.T) {
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := s.Context()
	entered := make(chan struct{})
	register(t, s, &kvscheduler.Descriptor{
		Name:        "waits",
		NBKeyPrefix: "waits/",
		KeySelector: func(k string) bool { return strings.HasPrefix(k, "waits/") },
		Create: func(context.Context, string, any) (any, error) {
			close(entered)
			<-ctx.Done()
			return nil, ctx.Err()
		},
	})
	go func() { _, _ = s.StartNBTransaction().SetValue("waits/a", "v").Commit(context.Background()) }()
	<-entered
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if ctx.Err() == nil {
		t.Fatal("the scheduler's context is not cancelled after Close")
	}
}

// TestWatchStartedWhileClosingIsClosed: a watch whose start found the
// scheduler open while Close was beginning is closed by Close. It was left
// open (its reader waiting forever) when Close took the watches to close
// them between the start's check and its registering the watch; since
// 0f37d97 both happen under the lock Close takes the watches with. A test
// hook runs in the start between the two and lets Close run meanwhile:
// until it returns, or for a while if it cannot (it waits for that lock).
func TestWatchStartedWhileClosingIsClosed(t *testing.T) {
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	kvscheduler.BeforeWatchRegistered(s, func() {
		done := make(chan error, 1)
		go func() { done <- s.Close() }()
		select {
		case err := <-done:
			closed <- err
		case <-time.After(200 * time.Millisecond):
			go func() { closed <- <-done }()
		}
	})
	w := s.WatchValueStatus(context.Background(), nil)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	select {
	case _, ok := <-w.C():
		if ok {
			t.Fatal("the watch delivered a status: nothing changed")
		}
	case <-time.After(20 * time.Second): // only against a hang
		t.Fatal("a watch started while Close began is still open after Close returned")
	}
}

// TestWatchOfAClosedSchedulerCanBeClosed: a watch started on a scheduler
// already closed is closed at once, and its owner's Close (deferred, as
// every reader of a watch does) is then a no-op. It panicked ("close of
// closed channel"): the start closed the watch's done channel directly,
// outside the Once that Close closes it through. pkg/dependents' state
// watch, started by Joining.Start on a host scheduler closed meanwhile,
// crashed a test binary so.
func TestWatchOfAClosedSchedulerCanBeClosed(t *testing.T) {
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	w := s.WatchValueStatus(context.Background(), nil)
	if _, ok := <-w.C(); ok {
		t.Fatal("a watch of a closed scheduler delivered a status")
	}
	w.Close()
	w.Close()
}
