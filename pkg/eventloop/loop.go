package eventloop

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"
	"k8s.io/utils/clock"
)

// Options configure a Loop. Only Handlers are needed for a useful loop; the
// rest has defaults.
type Options struct {
	// Config holds the tunables; nil means DefaultConfig().
	Config *Config

	// Handlers are called in this order (reversed for Reverse events).
	Handlers []EventHandler

	// Committer applies the transaction of each event. Nil discards them,
	// for loops whose handlers only keep internal state.
	Committer Committer

	// Logger receives the event boxes and the loop's own messages; nil means
	// logrus' standard logger.
	Logger *logrus.Entry

	// Clock drives timestamps and timers; nil means the real clock. Tests
	// pass a fake clock.
	Clock clock.Clock

	// Registerer registers the loop's metrics; nil means no metrics. The
	// global registry is never used implicitly.
	Registerer prometheus.Registerer

	// Name distinguishes several loops in one process: it becomes the "loop"
	// label of the metrics and a field of the log messages.
	Name string

	// Merge combines external configuration with the values handlers put;
	// nil means that external values override internal ones.
	Merge MergeFunc

	// IsStartupResync tells which event may be the startup resync. The
	// default accepts any FullResync or UpstreamResync except
	// ExternalConfigResync and HealingResync. A bridge that feeds the loop
	// with an input state sets it to accept only its own snapshot event.
	IsStartupResync func(Event) bool

	// OnResyncRequest is called by POST /controller/resync, typically to
	// reload the input state and push a resync carrying it. Without it, the
	// request pushes a RequestedResync.
	OnResyncRequest func(ctx context.Context) error

	// RefreshState, when set, is called on the loop goroutine at the start
	// of every FullResync that brings no state of its own (a healing or a
	// requested resync); what it returns replaces the input state, so a
	// bridge can re-read its source instead of replaying its last copy. An
	// error fails the resync like a handler error.
	RefreshState func() (any, error)

	// StartupWaitingFor, when set, is asked when the startup resync
	// deadline passes. If it names what the startup resync waits for (a
	// bridge's kinds whose caches have not synced), the loop does not
	// abort: Health reports the overdue resync with those names until it
	// arrives, events stay held, and the question is asked again every
	// deadline period. The startup resync must not be pushed without its
	// input: handlers would take what is missing as deleted.
	StartupWaitingFor func() []string
}

// Loop is a serialized event loop. Create it with New, start it with Start,
// and end it with Stop (graceful, with a Shutdown event) or Close.
type Loop struct {
	cfg        Config
	loopName   string // Options.Name
	handlers   []EventHandler
	names      []string // handler names, read once
	committer  Committer
	log        *logrus.Entry
	clock      clock.Clock
	isStartup  func(Event) bool
	onResync   func(context.Context) error
	refresh    func() (any, error)
	waitingFor func() []string
	retry      RetryOptions

	q    *queue
	hist *History
	met  *metrics

	lifeMu    sync.Mutex
	started   bool
	closing   bool
	closeOnce sync.Once
	stopCh    chan struct{}
	exited    chan struct{}
	stopFlag  atomic.Bool
	readyFlag atomic.Bool
	processed atomic.Uint64
	busy      atomic.Pointer[busyCall] // the handler or commit under way, for a stop that outlives its bound
	startCtx  context.Context          // Start's; when it ends the loop closes itself
	ctx       context.Context          // cancelled on close
	txnCtx    context.Context          // ctx marked as "inside the loop"
	cancel    context.CancelFunc

	statusMu   sync.Mutex
	state      LoopState
	abortErr   error
	overdue    error // the startup resync is late, waiting for its input
	healingDue time.Time
	// failedHealings mirrors heal.failed for Status.
	failedHealings int
	unhealthy      chan struct{}

	// Owned by the loop goroutine (or by Close when the loop never started).
	seq         uint64
	resyncCount int
	ready       bool
	aborted     error
	input       any // state of StateCarrier events
	ext         *externalConfig
	followUps   []queued
	fuHead      int
	selected    []int
	selErr      []error
	spare       *record
	heal        healing
	timers      timers
	iter        uint
}

// New creates a loop; it processes nothing until Start.
func New(opts Options) (*Loop, error) {
	cfg := DefaultConfig()
	if opts.Config != nil {
		cfg = *opts.Config
		cfg.ExternalSourcePrecedence = append([]string(nil), cfg.ExternalSourcePrecedence...)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &Loop{
		cfg:        cfg,
		loopName:   opts.Name,
		handlers:   append([]EventHandler(nil), opts.Handlers...),
		committer:  opts.Committer,
		log:        opts.Logger,
		clock:      opts.Clock,
		isStartup:  opts.IsStartupResync,
		onResync:   opts.OnResyncRequest,
		refresh:    opts.RefreshState,
		waitingFor: opts.StartupWaitingFor,
		retry: RetryOptions{
			Enabled:     cfg.EnableRetry,
			Delay:       cfg.DelayRetry.Duration,
			MaxAttempts: cfg.MaxRetryAttempts,
			ExpBackoff:  cfg.EnableExpBackoffRetry,
		},
		q:         newQueue(cfg.QueueSize),
		stopCh:    make(chan struct{}),
		exited:    make(chan struct{}),
		unhealthy: make(chan struct{}),
		ext:       newExternalConfig(opts.Merge, cfg.ExternalSourcePrecedence),
	}
	for i, h := range l.handlers {
		if h == nil {
			return nil, fmt.Errorf("eventloop: handler %d is nil", i)
		}
		l.names = append(l.names, h.String())
	}
	if l.log == nil {
		l.log = logrus.NewEntry(logrus.StandardLogger())
	}
	if opts.Name != "" {
		l.log = l.log.WithField("loop", opts.Name)
	}
	if l.clock == nil {
		l.clock = clock.RealClock{}
	}
	if l.isStartup == nil {
		l.isStartup = defaultIsStartupResync
	}
	l.hist = newHistory(cfg)
	if opts.Registerer != nil {
		m, err := newMetrics(opts.Registerer, opts.Name, l)
		if err != nil {
			return nil, err
		}
		l.met = m
	}
	return l, nil
}

func defaultIsStartupResync(ev Event) bool {
	switch ev.(type) {
	case *ExternalConfigResync, *HealingResync:
		return false
	}
	m := ev.Method()
	return m == FullResync || m == UpstreamResync
}

// Start starts the loop goroutine. Cancelling ctx closes the loop like Close
// (without a Shutdown event). The startup resync deadline counts from here.
func (l *Loop) Start(ctx context.Context) error {
	if ctx == nil {
		return errors.New("eventloop: Start called with a nil context")
	}
	l.lifeMu.Lock()
	defer l.lifeMu.Unlock()
	if l.closing {
		return ErrClosed
	}
	if l.started {
		return ErrAlreadyStarted
	}
	l.started = true
	l.startCtx = ctx
	l.ctx, l.cancel = context.WithCancel(ctx)
	l.txnCtx = context.WithValue(l.ctx, loopCtxKey{}, l)
	l.hist.setStart(l.clock.Now())
	// Timers are armed here rather than in the goroutine, so that the
	// deadline counts from Start even for a fake clock stepped right after.
	l.timers.startup = l.clock.NewTimer(l.cfg.StartupResyncDeadline.Duration)
	if l.cfg.RecordEventHistory {
		l.timers.trim = l.clock.NewTimer(historyTrimPeriod)
	}
	go l.run()
	return nil
}

// History returns the record of processed events.
func (l *Loop) History() *History { return l.hist }

// RequestResync asks for a resync the way POST /controller/resync does: it
// calls Options.OnResyncRequest, or pushes a RequestedResync.
func (l *Loop) RequestResync(ctx context.Context) error {
	if l.onResync != nil {
		return l.onResync(ctx)
	}
	return l.PushEvent(&RequestedResync{})
}
