package kvscheduler

import (
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
	// Registerer receives the metrics; nil means no metrics.
	Registerer prometheus.Registerer
	// Clock drives retries and history trimming; nil is the real clock.
	Clock clock.WithDelayedExecution
	// HistoryMaxCount bounds the number of recorded transactions; 0 means
	// 1000, a negative value disables history.
	HistoryMaxCount int
	// HistoryMaxAge drops older records; 0 means one hour.
	HistoryMaxAge time.Duration
	// HistoryTrimPeriod is how often records are trimmed by age even when no
	// transaction runs; 0 means one minute.
	HistoryTrimPeriod time.Duration
	// CloseTimeout bounds how long Close waits for the descriptor call in
	// progress; 0 means DefaultCloseTimeout. Descriptors should follow
	// Scheduler.Context, which Close cancels first, so that their calls
	// end well within it.
	CloseTimeout time.Duration
}

// DefaultCloseTimeout is the default of Options.CloseTimeout.
const DefaultCloseTimeout = 10 * time.Second

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
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = DefaultCloseTimeout
	}
	if o.HistoryTrimPeriod == 0 {
		o.HistoryTrimPeriod = time.Minute
	}
}
