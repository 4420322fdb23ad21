package leader_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestFenceClosesARenewDeadlineAfterTheRecordedRenewal: client-go takes a
// renewal's renewTime before its first request; when the optimistic update
// fails, it reads the Lease again and updates it with that renewTime, so
// the update that succeeds may be sent long after the renewTime the Lease
// then records. Standbys and the sharder count the lease duration from
// that recorded renewTime, so the fence (and the term's work) must end a
// renew deadline after it, not after the moment the last update was sent:
// here the read of the slow path takes 600 ms, which would keep the fence
// open 600 ms of the 1 s margin longer than the Lease says.
func TestFenceClosesARenewDeadlineAfterTheRecordedRenewal(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	slow := &slowRenewal{readDelay: 600 * time.Millisecond}
	leaseCfg := slow.wrap(cp.Config())
	e := newElectorOn(t, leaseCfg, ns, "a")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- e.Run(ctx, func(ctx context.Context) error { <-ctx.Done(); return nil })
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	eventually(t, "a leading", e.Holding)

	slow.arm()
	var recorded time.Time
	eventually(t, "a renewal through the slow path", func() bool {
		var ok bool
		recorded, ok = slow.renewed()
		return ok
	})
	// No renewal succeeds from here on: the fence closes by the last one.
	closeBy := recorded.Add(renewDeadline + time.Microsecond) // the Lease keeps microseconds
	// lastOpen is the last moment the fence was seen open.
	var lastOpen time.Time
	eventually(t, "the fence closing", func() bool {
		now := time.Now()
		if !e.Holding() {
			return true
		}
		lastOpen = now
		return false
	})
	if !lastOpen.Before(closeBy) {
		t.Errorf("the fence was still open at %s, %v after the renewTime the Lease recorded (%s), more than the renew deadline %v: a standby counts the lease duration from that renewTime",
			lastOpen.Format("15:04:05.000000"), lastOpen.Sub(recorded).Round(time.Millisecond), recorded.Format("15:04:05.000000"), renewDeadline)
	}
}

// slowRenewal drives one renewal of a lease client through client-go's
// slow path once armed: the next update fails without reaching the API
// server, the read that follows takes readDelay, the update after it goes
// through (its renewTime is kept), and every request after that fails, so
// that this renewal is the last.
type slowRenewal struct {
	readDelay time.Duration

	mu     sync.Mutex
	step   int // 0 unarmed, 1 fail the update, 2 delay the read, 3 pass the update, 4 fail all
	renewT time.Time
}

func (s *slowRenewal) arm() {
	s.mu.Lock()
	s.step = 1
	s.mu.Unlock()
}

// renewed returns the renewTime of the update that went through after the
// slow read.
func (s *slowRenewal) renewed() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.renewT, s.step == 4
}

func (s *slowRenewal) wrap(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.ContentType, c.AcceptContentTypes = "application/json", "application/json"
	c.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			s.mu.Lock()
			step := s.step
			switch {
			case step == 1 && req.Method == http.MethodPut:
				s.step = 2
			case step == 2 && req.Method == http.MethodGet:
				s.step = 3
			}
			s.mu.Unlock()
			switch {
			case step == 4 || step == 1 && req.Method == http.MethodPut:
				return nil, errors.New("lease client cut off by the test")
			case step == 2 && req.Method == http.MethodGet:
				// Fault injection: the slow path's read is slow.
				time.Sleep(s.readDelay)
			case step == 3 && req.Method == http.MethodPut:
				return s.lastUpdate(next, req)
			}
			return next.RoundTrip(req)
		})
	})
	return c
}

// lastUpdate sends the slow path's update, and records its renewTime if
// the API server accepted it.
func (s *slowRenewal) lastUpdate(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	renew, ok := renewTimeOf(body)
	s.mu.Lock()
	if ok {
		s.renewT, s.step = renew, 4
	}
	s.mu.Unlock()
	return resp, nil
}
