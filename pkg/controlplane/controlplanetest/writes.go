package controlplanetest

import (
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// WriteLog records when a client's writes (every request but a GET) were
// sent, for tests that assert who wrote when: that a standby or a fenced
// replica wrote nothing after some moment, or when a lease was renewed.
// Its zero value is ready; it is safe for concurrent use.
type WriteLog struct {
	mu    sync.Mutex
	times []time.Time
}

// Wrap returns a copy of cfg whose writes are recorded in l, each with the
// time it was sent. With acceptedOnly, only writes the API server accepted
// (2xx) are recorded, and no deletes: a log of lease renewals, which must
// not count a failed attempt or the removal of a released lease.
func (l *WriteLog) Wrap(cfg *rest.Config, acceptedOnly bool) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet || acceptedOnly && req.Method == http.MethodDelete {
				return next.RoundTrip(req)
			}
			sent := time.Now()
			resp, err := next.RoundTrip(req)
			if !acceptedOnly || err == nil && resp.StatusCode < 300 {
				l.mu.Lock()
				l.times = append(l.times, sent)
				l.mu.Unlock()
			}
			return resp, err
		})
	})
	return c
}

// Times returns the recorded times, in the order the writes returned.
func (l *WriteLog) Times() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.times...)
}

// First returns the earliest recorded time (zero if none).
func (l *WriteLog) First() time.Time {
	var f time.Time
	for _, x := range l.Times() {
		if f.IsZero() || x.Before(f) {
			f = x
		}
	}
	return f
}

// Last returns the latest recorded time (zero if none).
func (l *WriteLog) Last() time.Time {
	var last time.Time
	for _, x := range l.Times() {
		if x.After(last) {
			last = x
		}
	}
	return last
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
