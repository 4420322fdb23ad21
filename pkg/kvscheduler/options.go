package kvscheduler

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"
	"k8s.io/utils/clock"
)

// Options configure a Scheduler. The zero value is usable.
type Options struct {
	// Name distinguishes schedulers in metrics (const label "scheduler").
	Name string
	// Logger receives the transaction logs; nil disables them.
	Logger *logrus.Logger
	// TxnLogLevel is the level of transaction logs; the zero value
	// (PanicLevel, which makes no sense here) means DebugLevel. The text is
	// only built when the level is enabled.
	TxnLogLevel logrus.Level
	// TxnLogFormat is how transactions are logged at TxnLogLevel:
	// TxnLogLine (empty means it: one line per transaction) or TxnLogBoxes
	// (the reference's multi-line box, every operation on its own line).
	TxnLogFormat string
	// Registerer receives the metrics; nil means no metrics.
	Registerer prometheus.Registerer
	// Clock drives retries and history trimming; nil is the real clock.
	Clock clock.WithDelayedExecution
	// HistoryMaxCount bounds the number of recorded transactions; 0 means
	// 1000, a negative value disables history.
	HistoryMaxCount int
	// HistoryMaxAge drops older records; 0 means one hour. A negative age
	// is refused by New (to disable history, set HistoryMaxCount < 0).
	HistoryMaxAge time.Duration
	// HistoryTrimPeriod is how often records are trimmed by age even when no
	// transaction runs; 0 means one minute. A negative period is refused by
	// New.
	HistoryTrimPeriod time.Duration
	// CloseTimeout bounds how long Close waits for the descriptor call in
	// progress; 0 means DefaultCloseTimeout. A negative timeout is refused
	// by New. Descriptors should follow
	// Scheduler.Context, which Close cancels first, so that their calls
	// end well within it.
	CloseTimeout time.Duration
}

// The formats of Options.TxnLogFormat.
const (
	// TxnLogLine logs one line per transaction (TxnRecord.Line): a
	// scheduler that runs many transactions stays readable.
	TxnLogLine = "line"
	// TxnLogBoxes logs the VPP-Agent's transaction box (TxnRecord.String).
	TxnLogBoxes = "boxes"
)

// DefaultCloseTimeout is the default of Options.CloseTimeout.
const DefaultCloseTimeout = 10 * time.Second

// validate refuses the values that have no meaning. A negative duration
// would be armed as a timer that fires at once: the history trim re-arms
// itself at once, for ever (a busy loop), and an age below zero drops
// every record as soon as it is made.
func (o *Options) validate() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"HistoryMaxAge", o.HistoryMaxAge},
		{"HistoryTrimPeriod", o.HistoryTrimPeriod},
		{"CloseTimeout", o.CloseTimeout},
	} {
		if f.d < 0 {
			return fmt.Errorf("%w: %s is %v; it must be positive, or 0 for its default", ErrInvalidOptions, f.name, f.d)
		}
	}
	if f := o.TxnLogFormat; f != "" && f != TxnLogLine && f != TxnLogBoxes {
		return fmt.Errorf("%w: TxnLogFormat %q is neither %q nor %q", ErrInvalidOptions, f, TxnLogLine, TxnLogBoxes)
	}
	return nil
}

func (o *Options) defaults() {
	if o.TxnLogLevel == logrus.PanicLevel {
		o.TxnLogLevel = logrus.DebugLevel
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.HistoryMaxCount == 0 {
		o.HistoryMaxCount = 1000
	}
	if o.HistoryMaxAge == 0 {
		o.HistoryMaxAge = time.Hour
	}
	if o.CloseTimeout == 0 {
		o.CloseTimeout = DefaultCloseTimeout
	}
	if o.HistoryTrimPeriod == 0 {
		o.HistoryTrimPeriod = time.Minute
	}
}
