package eventloop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/sirupsen/logrus"
	"sigs.k8s.io/yaml"
)

// Config holds the options of a Loop. Its JSON/YAML names are those of
// Contiv's controller.conf, plus a few options Contiv hard-coded. Start from
// DefaultConfig (or ParseConfig, which starts from it): the zero Config is
// not valid.
//
// Defaults:
//
//	enableRetry:                   true
//	delayRetry:                    1s      (integers are nanoseconds, as in Contiv)
//	maxRetryAttempts:              3
//	enableExpBackoffRetry:         true
//	startupResyncDeadline:         30s
//	enablePeriodicHealing:         false
//	periodicHealingInterval:       30s
//	delayAfterErrorHealing:        5s
//	maxAfterErrorHealingDelay:     5m      (not in Contiv: cap of the healing backoff)
//	maxFailedHealings:             5       (not in Contiv, where one failed healing is fatal)
//	recordEventHistory:            true
//	eventHistoryAgeLimit:          1440    (minutes; or a duration string such as "24h")
//	permanentlyRecordedInitPeriod: 60      (minutes; or a duration string)
//	eventHistoryMaxRecords:        10000   (not in Contiv: count bound of the history)
//	queueSize:                     1000    (Contiv's hard-coded queue size)
//	eventLogLevel:                 info    (level of the NEW/FINALIZED EVENT boxes)
//	eventLogFormat:                boxes   (not in Contiv: "line" logs one line per event)
//	externalSourcePrecedence:      []      (external config sources, highest first)
type Config struct {
	// EnableRetry, DelayRetry, MaxRetryAttempts and EnableExpBackoffRetry are
	// passed to the committer with every transaction (TxnRequest.Retry).
	EnableRetry           bool     `json:"enableRetry"`
	DelayRetry            Duration `json:"delayRetry"`
	MaxRetryAttempts      int      `json:"maxRetryAttempts"`
	EnableExpBackoffRetry bool     `json:"enableExpBackoffRetry"`

	// StartupResyncDeadline bounds how long after Start the loop waits for the
	// startup resync before it aborts and fails the events held for it.
	StartupResyncDeadline Duration `json:"startupResyncDeadline"`

	// EnablePeriodicHealing runs a DownstreamResync every
	// PeriodicHealingInterval once the startup resync has run.
	EnablePeriodicHealing   bool     `json:"enablePeriodicHealing"`
	PeriodicHealingInterval Duration `json:"periodicHealingInterval"`

	// DelayAfterErrorHealing is the delay of the first after-error healing
	// resync; the delay doubles for healings that follow within
	// MaxAfterErrorHealingDelay of the previous one, up to
	// MaxAfterErrorHealingDelay.
	DelayAfterErrorHealing    Duration `json:"delayAfterErrorHealing"`
	MaxAfterErrorHealingDelay Duration `json:"maxAfterErrorHealingDelay"`
	// MaxFailedHealings is how many after-error healings in a row may fail
	// (each failure schedules the next, with the growing delay) before the
	// loop aborts. Contiv aborts on the first; a failure that outlasts a
	// few minutes of healing (an API server that is down) should not.
	MaxFailedHealings int `json:"maxFailedHealings"`

	// RecordEventHistory keeps a record of every processed event. Records
	// whose processing ended more than EventHistoryAgeLimit ago are trimmed
	// every minute, except those of the first PermanentlyRecordedInitPeriod
	// after Start. At most EventHistoryMaxRecords are kept; the permanently
	// kept records take at most half of them.
	RecordEventHistory            bool    `json:"recordEventHistory"`
	EventHistoryAgeLimit          Minutes `json:"eventHistoryAgeLimit"`
	PermanentlyRecordedInitPeriod Minutes `json:"permanentlyRecordedInitPeriod"`
	EventHistoryMaxRecords        int     `json:"eventHistoryMaxRecords"`

	// QueueSize bounds the number of events waiting to be processed, and
	// separately the number of pending follow-ups.
	QueueSize int `json:"queueSize"`

	// EventLogLevel is the logrus level of the event boxes. Set it below the
	// logger's level (e.g. debug) to silence them cheaply.
	EventLogLevel logrus.Level `json:"eventLogLevel"`

	// EventLogFormat is how events are logged at EventLogLevel: EventLogBoxes
	// (empty means it: the seed's NEW EVENT and FINALIZED EVENT boxes) or
	// EventLogLine (one line per event, once it is finalized).
	EventLogFormat string `json:"eventLogFormat,omitempty"`

	// ExternalSourcePrecedence orders external configuration sources, highest
	// precedence first. Sources not listed rank below all listed ones, in
	// lexical order of their names (a smaller name ranks higher).
	ExternalSourcePrecedence []string `json:"externalSourcePrecedence,omitempty"`
}

// DefaultConfig returns the default configuration (see Config).
func DefaultConfig() Config {
	return Config{
		EnableRetry:                   true,
		DelayRetry:                    Duration{time.Second},
		MaxRetryAttempts:              3,
		EnableExpBackoffRetry:         true,
		StartupResyncDeadline:         Duration{30 * time.Second},
		EnablePeriodicHealing:         false,
		PeriodicHealingInterval:       Duration{30 * time.Second},
		DelayAfterErrorHealing:        Duration{5 * time.Second},
		MaxAfterErrorHealingDelay:     Duration{5 * time.Minute},
		MaxFailedHealings:             5,
		RecordEventHistory:            true,
		EventHistoryAgeLimit:          Minutes{24 * time.Hour},
		PermanentlyRecordedInitPeriod: Minutes{time.Hour},
		EventHistoryMaxRecords:        10000,
		QueueSize:                     1000,
		EventLogLevel:                 logrus.InfoLevel,
	}
}

// ParseConfig reads a YAML (or JSON) configuration on top of the defaults:
// options not mentioned keep their default. Unknown options are an error, so
// that typos do not go unnoticed.
func ParseConfig(data []byte) (Config, error) {
	cfg := DefaultConfig()
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg, nil
	}
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return Config{}, fmt.Errorf("eventloop: parsing config: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// LoadConfig reads the configuration file at path with ParseConfig.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("eventloop: reading config: %w", err)
	}
	return ParseConfig(data)
}

// Validate reports every invalid option (joined).
func (c *Config) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf("eventloop: invalid config: "+format, args...))
		}
	}
	check(c.DelayRetry.Duration >= 0, "delayRetry must not be negative")
	check(c.MaxRetryAttempts >= 0, "maxRetryAttempts must not be negative")
	check(c.StartupResyncDeadline.Duration > 0, "startupResyncDeadline must be positive")
	check(!c.EnablePeriodicHealing || c.PeriodicHealingInterval.Duration > 0, "periodicHealingInterval must be positive")
	check(c.DelayAfterErrorHealing.Duration >= 0, "delayAfterErrorHealing must not be negative")
	check(c.MaxAfterErrorHealingDelay.Duration >= c.DelayAfterErrorHealing.Duration, "maxAfterErrorHealingDelay must be at least delayAfterErrorHealing")
	check(c.MaxFailedHealings >= 1, "maxFailedHealings must be at least 1")
	check(c.EventHistoryAgeLimit.Duration >= 0, "eventHistoryAgeLimit must not be negative")
	check(c.PermanentlyRecordedInitPeriod.Duration >= 0, "permanentlyRecordedInitPeriod must not be negative")
	check(!c.RecordEventHistory || c.EventHistoryMaxRecords > 0, "eventHistoryMaxRecords must be positive")
	check(c.QueueSize > 0, "queueSize must be positive (start from DefaultConfig)")
	check(c.EventLogLevel <= logrus.TraceLevel, "eventLogLevel %d is not a logrus level", c.EventLogLevel)
	check(c.EventLogFormat == "" || c.EventLogFormat == EventLogBoxes || c.EventLogFormat == EventLogLine,
		"eventLogFormat %q is neither %q nor %q", c.EventLogFormat, EventLogBoxes, EventLogLine)
	seen := make(map[string]bool, len(c.ExternalSourcePrecedence))
	for _, s := range c.ExternalSourcePrecedence {
		check(s != "", "externalSourcePrecedence has an empty source name")
		check(!seen[s], "externalSourcePrecedence lists %q twice", s)
		seen[s] = true
	}
	return errors.Join(errs...)
}

// Duration is a time.Duration read from JSON/YAML as a duration string
// ("1.5s") or, as in Contiv's configuration, an integer number of
// nanoseconds. It is written as a duration string.
type Duration struct{ time.Duration }

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	v, err := parseDuration(b, time.Nanosecond)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// Minutes is a time.Duration read from JSON/YAML as a duration string or, as
// in Contiv's configuration, an integer number of minutes. It is written as a
// duration string.
type Minutes struct{ time.Duration }

// UnmarshalJSON implements json.Unmarshaler.
func (m *Minutes) UnmarshalJSON(b []byte) error {
	v, err := parseDuration(b, time.Minute)
	if err != nil {
		return err
	}
	m.Duration = v
	return nil
}

// MarshalJSON implements json.Marshaler.
func (m Minutes) MarshalJSON() ([]byte, error) { return json.Marshal(m.String()) }

func parseDuration(b []byte, unit time.Duration) (time.Duration, error) {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return 0, err
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("eventloop: invalid duration %q: %w", s, err)
		}
		return d, nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("eventloop: invalid duration %s: want an integer or a duration string", b)
	}
	if unit > 1 && (n > int64(1<<63-1)/int64(unit) || n < -int64(1<<63-1)/int64(unit)) {
		return 0, fmt.Errorf("eventloop: duration %d overflows", n)
	}
	return time.Duration(n) * unit, nil
}
