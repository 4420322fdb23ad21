package controller

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	clientworkqueue "k8s.io/client-go/util/workqueue"
)

// DefaultRewriteLimit is the RewriteLimit of controllers given none: ten
// passes in a row that each rewrite the object they were started by. Normal
// convergence (add a finalizer, then set the status, then apply children)
// takes a few; handlers that undo each other never stop.
const DefaultRewriteLimit = 10

// write is one handler's successful update of the object during a pass,
// known from the object it returned: a resourceVersion other than the one
// it was given.
type write struct {
	handler         string
	resourceVersion string
}

// pass is what one handling of a key did.
type pass struct {
	// resourceVersion is the object's when the pass began; "" when the
	// object is gone.
	resourceVersion string
	writes          []write
	err             error
	// stale is set when no handler ran because the cached copy was older
	// than a version the handlers wrote (see ownWrites).
	stale bool
}

// hotLoops finds keys whose handlers keep rewriting their object: a pass
// writes it, the watch event of that write starts the next pass at once,
// which writes it again, and so on (two handlers that undo each other, or
// one that writes on every pass). Such a key's passes are held back with
// the controller's rate limiter, as a failing key's are, and the handlers
// and the object are logged once per episode.
//
// A pass counts only when it began from the very resourceVersion the last
// pass wrote, so a chain is the controller's own doing, not someone else's
// changes that the handlers respond to, and no timing is involved. A pass
// that writes nothing and fails nothing ends the chain, so a handler that
// writes and then finds nothing to do is never held back; so does every
// other pass after which the chain cannot go on (see wroteNothing), so a
// key keeps no entry once it is deleted or its chain is broken.
type hotLoops struct {
	limit   int // <= 0: off
	limiter clientworkqueue.TypedRateLimiter[string]
	log     logrus.FieldLogger
	metrics *Metrics
	gvk     string

	// tracked is len(keys), read without the lock so that the common case,
	// no key with a chain of writes, costs one atomic load per pass.
	tracked atomic.Int64
	mu      sync.Mutex
	keys    map[string]*rewrites
}

// rewrites is a key's current chain of passes that rewrote its object.
type rewrites struct {
	// written are the resourceVersions the last pass left behind; a pass
	// that begins from one of them continues the chain.
	written []string
	streak  int      // passes in the chain
	writes  int      // writes in the chain or, while fighting, the episode
	writers []string // handlers that wrote, in order of their first write
	// fighting is set once the chain reached the limit, until a pass
	// writes nothing.
	fighting  bool
	since     time.Time
	holdUntil time.Time
}

func newHotLoops(limit int, limiter clientworkqueue.TypedRateLimiter[string], log logrus.FieldLogger, m *Metrics, gvk string) *hotLoops {
	if limit == 0 {
		limit = DefaultRewriteLimit
	}
	return &hotLoops{limit: limit, limiter: limiter, log: log, metrics: m, gvk: gvk, keys: map[string]*rewrites{}}
}

// held returns how much longer a fighting key is to wait before its next
// pass; 0 for every other key.
func (h *hotLoops) held(key string, now time.Time) time.Duration {
	if h.tracked.Load() == 0 {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.keys[key]
	if r == nil || !r.fighting {
		return 0
	}
	return max(r.holdUntil.Sub(now), 0)
}

// passed records a pass of key and returns how long the key is to be held
// before its next pass: 0 unless its handlers fight. A key held this way is
// not forgotten by the rate limiter, so each further fighting pass waits
// longer, up to the limiter's maximum.
func (h *hotLoops) passed(key string, p pass, now time.Time) time.Duration {
	if h.limit <= 0 {
		return 0
	}
	if len(p.writes) == 0 {
		if h.tracked.Load() > 0 {
			h.wroteNothing(key, p, now)
		}
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.keys[key]
	if r == nil {
		r = &rewrites{}
		h.keys[key] = r
		h.tracked.Add(1)
	}
	if p.resourceVersion == "" || !slices.Contains(r.written, p.resourceVersion) {
		// Started by someone else's change, or the first write: a new
		// chain. A fight under way goes on until a pass writes nothing.
		r.streak = 0
		if !r.fighting {
			r.writes, r.writers = 0, nil
		}
	}
	r.streak++
	r.writes += len(p.writes)
	r.written = r.written[:0]
	for _, w := range p.writes {
		r.written = append(r.written, w.resourceVersion)
		if !slices.Contains(r.writers, w.handler) {
			r.writers = append(r.writers, w.handler)
		}
	}
	if !r.fighting && r.streak < h.limit {
		return 0
	}
	if !r.fighting {
		r.fighting, r.since = true, now
		h.metrics.fightStarted(h.gvk)
		h.log.WithFields(logrus.Fields{"key": key, "handlers": strings.Join(r.writers, ","), "writes": r.writes}).
			Warnf("%s %s keep%s rewriting %s %s: each pass's write starts the next pass (handlers undoing each other, or writing on every pass); "+
				"its passes now back off like a failing key's until one changes nothing",
				plural(len(r.writers), "handler", "handlers"), strings.Join(r.writers, " and "), plural(len(r.writers), "s", ""), h.gvk, key)
	}
	d := h.limiter.When(key)
	r.holdUntil = now.Add(d)
	return d
}

// wroteNothing ends key's chain after a pass that wrote nothing, unless
// that pass failed (and is retried) having begun from a version the chain
// wrote: often a conflict with the fight's other write, which neither
// continues nor ends the chain. Every other such pass ends it, so no entry
// outlives the chance of its chain going on: a pass that succeeded (or
// returned ErrIgnore or a permanent error, so no retry comes), a pass of a deleted object (a
// later object of that name starts from a version never written here), and
// a pass begun from someone else's version (the chain cannot continue
// from there; a fight under way is kept, as its writes are).
func (h *hotLoops) wroteNothing(key string, p pass, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.keys[key]
	if r == nil {
		return
	}
	retried := p.err != nil && !errors.Is(p.err, ErrIgnore) && !onlyPermanent(p.err)
	if retried && p.resourceVersion != "" && (r.fighting || slices.Contains(r.written, p.resourceVersion)) {
		return
	}
	delete(h.keys, key)
	h.tracked.Add(-1)
	if r.fighting {
		h.log.WithFields(logrus.Fields{"key": key, "handlers": strings.Join(r.writers, ","), "writes": r.writes}).
			Infof("%s %s stopped rewriting %s %s after %d writes in %s", plural(len(r.writers), "handler", "handlers"),
				strings.Join(r.writers, " and "), h.gvk, key, r.writes, now.Sub(r.since).Round(time.Millisecond))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
