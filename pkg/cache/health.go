package cache

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Lists and watches that fail because the API server is away (connection
// refused or reset, 503, 429, timeouts) are retried inside the informer's
// list and watch calls, from retryBase doubling to retryMax. client-go's
// reflector would instead wait behind a backoff that grows to tens of
// seconds while the server restarts repeatedly; with these, an informer is
// listing and watching again within about a second of the server answering.
const (
	retryBase = 50 * time.Millisecond
	retryMax  = time.Second
	// logEvery is how often a failing kind's errors are logged; the
	// failures in between are counted in the next line.
	logEvery = 10 * time.Second
	// relistEvery bounds how often a kind's informer is rebuilt because
	// its watch was too old.
	relistEvery = time.Second
)

// DefaultUnhealthyAfter is how long a kind may fail to list or watch before
// it is reported by name, when the factory sets no UnhealthyAfter.
const DefaultUnhealthyAfter = 30 * time.Second

// KindHealth is how one kind's informer has fared with the API server.
type KindHealth struct {
	// Errors counts every failed list or watch, and every error a watch
	// stream ended with.
	Errors uint64
	// LastError is the last of them, nil if none.
	LastError error
	// FailingSince is when the current run of failures began; zero while
	// the kind lists and watches.
	FailingSince time.Time
}

// kindHealth tracks one kind's list and watch failures, logs them rate
// limited, and rebuilds the informer when its watch is too old.
type kindHealth struct {
	log            logrus.FieldLogger
	unhealthyAfter time.Duration
	relist         func() error // set before the informer first runs

	// lacksWatchList is set once a stream of initial events of this kind
	// went quiet without its end bookmark: the kind lists from then on.
	lacksWatchList atomic.Bool

	relisting  atomic.Bool
	lastRelist atomic.Int64 // unix nanoseconds

	mu           sync.Mutex
	errors       uint64
	lastErr      error
	failingSince time.Time
	lastLogged   time.Time
	unlogged     int
	reported     bool
}

func (h *kindHealth) snapshot() KindHealth {
	h.mu.Lock()
	defer h.mu.Unlock()
	return KindHealth{Errors: h.errors, LastError: h.lastErr, FailingSince: h.failingSince}
}

// setLastErr records an error client-go's reflector reports, already
// counted when the call failed.
func (h *kindHealth) setLastErr(err error) {
	h.mu.Lock()
	h.lastErr = err
	h.mu.Unlock()
}

func (h *kindHealth) failed(verb string, err error) {
	if errors.Is(err, context.Canceled) {
		// The informer's own context ended (the factory stopping) and cut
		// the request short: no failure of the API server, and nothing to
		// warn about while an operator shuts down.
		h.log.WithError(err).WithField("verb", verb).Debug("list/watch cut short by the stop")
		return
	}
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errors++
	h.lastErr = err
	if h.failingSince.IsZero() {
		h.failingSince = now
	}
	if now.Sub(h.lastLogged) >= logEvery {
		entry := h.log.WithError(err).WithField("verb", verb)
		if h.unlogged > 0 {
			entry = entry.WithField("failuresSinceLastLine", h.unlogged)
		}
		entry.Warn("list/watch failed; retrying")
		h.lastLogged, h.unlogged = now, 0
	} else {
		h.unlogged++
	}
	if !h.reported && now.Sub(h.failingSince) >= h.unhealthyAfter {
		h.reported = true
		h.log.WithError(err).WithField("failingFor", now.Sub(h.failingSince).Round(time.Second).String()).
			Error("kind cannot list or watch; its cache is going stale")
	}
}

func (h *kindHealth) ok() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failingSince.IsZero() {
		return
	}
	h.log.WithField("failedFor", time.Since(h.failingSince).Round(time.Millisecond).String()).
		Info("list/watch works again")
	h.failingSince, h.reported = time.Time{}, false
}

// expired rebuilds the informer in the background, so that it lists again
// at once instead of after client-go's reflector backoff.
func (h *kindHealth) expired() {
	if h.relist == nil || !h.relisting.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer h.relisting.Store(false)
		if wait := time.Until(time.Unix(0, h.lastRelist.Load()).Add(relistEvery)); wait > 0 {
			time.Sleep(wait)
		}
		h.lastRelist.Store(time.Now().UnixNano())
		if err := h.relist(); err != nil {
			h.log.WithError(err).Error("cannot rebuild the informer to list again; it lists on the next Start")
		}
	}()
}

// transient reports whether err means the API server is away or busy for
// now, rather than that the request is wrong or forbidden: every error
// without an API status (the request got no answer: refused, reset, EOF,
// TLS handshake cut short, timeout), and 503, 504, 429 and timeouts.
func transient(err error) bool {
	var client *clientError
	if errors.As(err, &client) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	}
	return apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err)
}

// clientError is a failure to get the kind's client (its resource is not
// known yet): not retried here, since resolving it means discovery, which
// the reflector's own backoff paces.
type clientError struct{ err error }

func (e *clientError) Error() string { return e.err.Error() }
func (e *clientError) Unwrap() error { return e.err }

// retryTransient calls call until it succeeds, fails for a reason other than
// the server being away, or ctx ends, recording each failure in h (which may
// be nil).
func retryTransient[T any](ctx context.Context, h *kindHealth, verb string, call func() (T, error)) (T, error) {
	delay := retryBase
	for {
		v, err := call()
		if err == nil {
			if h != nil && verb != "watch" {
				h.ok() // a watch works once it proves it (healthWatch)
			}
			return v, nil
		}
		if h != nil {
			h.failed(verb, err)
			// An expired continue token needs no rebuild: client-go's pager
			// lists again whole at once, and a rebuild would list a second
			// time.
			if (apierrors.IsResourceExpired(err) || apierrors.IsGone(err)) && verb != "list page" {
				h.expired()
			}
		}
		if !transient(err) || ctx.Err() != nil {
			return v, err
		}
		t := time.NewTimer(delay/2 + rand.N(delay))
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
		delay = min(2*delay, retryMax)
	}
}

// healthWatch passes a watch's events on and keeps the watch going through
// API server restarts: when the stream breaks (the connection closed or
// broke), it watches again from the last resourceVersion it passed on,
// retrying as lists do, so the reflector sees one watch and never waits
// behind its own backoff. Errors the stream ends with are recorded; a watch
// too old for the server is passed on and rebuilds the informer, which
// lists at once. Its goroutine ends when the watch is stopped or ctx ends,
// read or not.
type healthWatch struct {
	h         *kindHealth
	reopen    func(ctx context.Context, resourceVersion string) (watch.Interface, error)
	resumable bool          // false until a watch-list stream's initial events are in
	quiet     time.Duration // how long a stream of initial events may go quiet without its end
	rv        string
	out       chan watch.Event
	cancel    context.CancelFunc
}

func newHealthWatch(ctx context.Context, in watch.Interface, h *kindHealth, rv string, resumable bool, quiet time.Duration,
	reopen func(context.Context, string) (watch.Interface, error)) *healthWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &healthWatch{h: h, reopen: reopen, resumable: resumable, rv: rv, out: make(chan watch.Event), cancel: cancel, quiet: quiet}
	go w.loop(ctx, in)
	return w
}

func (w *healthWatch) loop(ctx context.Context, in watch.Interface) {
	defer close(w.out)
	defer func() { in.Stop() }()
	for {
		broke := w.pass(ctx, in)
		in.Stop()
		if !broke || !w.resumable || ctx.Err() != nil || w.rv == "" || w.rv == "0" {
			// (Without a resourceVersion to resume from, events could be
			// missed: the reflector decides.)
			return
		}
		next, err := retryTransient(ctx, w.h, "watch", func() (watch.Interface, error) { return w.reopen(ctx, w.rv) })
		if err != nil {
			var status apierrors.APIStatus
			if errors.As(err, &status) && ctx.Err() == nil {
				// Tell the reflector (too old: it lists again).
				w.send(ctx, watch.Event{Type: watch.Error, Object: &metav1.Status{
					Status: metav1.StatusFailure, Code: status.Status().Code, Reason: status.Status().Reason, Message: status.Status().Message,
				}})
			}
			return
		}
		in = next
	}
}

// pass forwards in's events until it ends; it reports whether the stream
// broke and may be reopened.
func (w *healthWatch) pass(ctx context.Context, in watch.Interface) bool {
	// A watch counts as working once it delivers an event or stays open
	// for a second; one that closes sooner without events is a failure.
	proven := time.NewTimer(time.Second)
	defer proven.Stop()
	works := false
	// A stream of initial events must end with its bookmark; one that goes
	// quiet without it comes from a server that lacks watch-list.
	var quiet <-chan time.Time
	var quietTimer *time.Timer
	if !w.resumable && w.quiet > 0 {
		quietTimer = time.NewTimer(w.quiet)
		defer func() { quietTimer.Stop() }()
		quiet = quietTimer.C
	}
	for {
		var e watch.Event
		var ok bool
		select {
		case <-quiet:
			w.h.lackWatchList()
			w.send(ctx, watch.Event{Type: watch.Error, Object: noWatchListStatus()})
			return false
		case e, ok = <-in.ResultChan():
			if !ok {
				if !works && ctx.Err() == nil {
					w.h.failed("watch", errors.New("watch closed within a second without events"))
				}
				return true
			}
		case <-proven.C:
			works = true
			w.h.ok()
			continue
		case <-ctx.Done():
			return false
		}
		if e.Type == watch.Error {
			err := apierrors.FromObject(e.Object)
			w.h.failed("watch", err)
			switch {
			case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
				w.h.expired()
			case apierrors.IsInternalError(err) && strings.Contains(err.Error(), "unable to decode an event from the watch stream"):
				return true // the connection broke
			}
		} else {
			if !works {
				works = true
				w.h.ok()
			}
			if m, err := meta.Accessor(e.Object); err == nil && m.GetResourceVersion() != "" {
				w.rv = m.GetResourceVersion()
				if e.Type == watch.Bookmark && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
					w.resumable = true
				}
			}
		}
		if quiet != nil {
			if w.resumable {
				quietTimer.Stop()
				quiet = nil // the initial events are in
			} else {
				quietTimer.Reset(w.quiet)
			}
		}
		if !w.send(ctx, e) {
			return false
		}
		if e.Type == watch.Error {
			return false // the server ends a stream after an error
		}
	}
}

func (w *healthWatch) send(ctx context.Context, e watch.Event) bool {
	select {
	case w.out <- e:
		return true
	case <-ctx.Done():
		return false
	}
}

// ResultChan returns the events, closed when the watch ends.
func (w *healthWatch) ResultChan() <-chan watch.Event { return w.out }

// Stop ends the watch and its goroutine.
func (w *healthWatch) Stop() { w.cancel() }
