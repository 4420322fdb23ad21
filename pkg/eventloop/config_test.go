package eventloop_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"sigs.k8s.io/yaml"

	"github.com/lariat-dev/lariat/pkg/eventloop"
)

func TestDefaultConfigMatchesSeed(t *testing.T) {
	c := eventloop.DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	want := eventloop.Config{
		EnableRetry:                   true,
		DelayRetry:                    eventloop.Duration{Duration: time.Second},
		MaxRetryAttempts:              3,
		EnableExpBackoffRetry:         true,
		StartupResyncDeadline:         eventloop.Duration{Duration: 30 * time.Second},
		PeriodicHealingInterval:       eventloop.Duration{Duration: 30 * time.Second},
		DelayAfterErrorHealing:        eventloop.Duration{Duration: 5 * time.Second},
		MaxAfterErrorHealingDelay:     eventloop.Duration{Duration: 5 * time.Minute},
		MaxFailedHealings:             5,
		RecordEventHistory:            true,
		EventHistoryAgeLimit:          eventloop.Minutes{Duration: 1440 * time.Minute},
		PermanentlyRecordedInitPeriod: eventloop.Minutes{Duration: 60 * time.Minute},
		EventHistoryMaxRecords:        10000,
		QueueSize:                     1000,
		EventLogLevel:                 logrus.InfoLevel,
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("defaults\n got %+v\nwant %+v", c, want)
	}
}

func TestParseConfig(t *testing.T) {
	yml := `
# Contiv's names and units: integers are nanoseconds, history limits minutes.
enableRetry: false
delayRetry: 2000000000
maxRetryAttempts: 5
startupResyncDeadline: 45s
enablePeriodicHealing: true
periodicHealingInterval: 1m
eventHistoryAgeLimit: 60
permanentlyRecordedInitPeriod: 2h
eventLogLevel: debug
externalSourcePrecedence: [operator, file]
`
	c, err := eventloop.ParseConfig([]byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	want := eventloop.DefaultConfig()
	want.EnableRetry = false
	want.DelayRetry.Duration = 2 * time.Second
	want.MaxRetryAttempts = 5
	want.StartupResyncDeadline.Duration = 45 * time.Second
	want.EnablePeriodicHealing = true
	want.PeriodicHealingInterval.Duration = time.Minute
	want.EventHistoryAgeLimit.Duration = time.Hour
	want.PermanentlyRecordedInitPeriod.Duration = 2 * time.Hour
	want.EventLogLevel = logrus.DebugLevel
	want.ExternalSourcePrecedence = []string{"operator", "file"}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("parsed\n got %+v\nwant %+v", c, want)
	}

	// Round trip through YAML.
	out, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := eventloop.ParseConfig(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !reflect.DeepEqual(back, c) {
		t.Fatalf("round trip\n got %+v\nwant %+v\n%s", back, c, out)
	}

	// From a file; an empty file means the defaults.
	path := filepath.Join(t.TempDir(), "eventloop.yaml")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := eventloop.LoadConfig(path); err != nil || !reflect.DeepEqual(c, eventloop.DefaultConfig()) {
		t.Fatalf("empty file: %+v, %v", c, err)
	}
	if _, err := eventloop.LoadConfig(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestInvalidConfig(t *testing.T) {
	for _, yml := range []string{
		"enableRetyr: true",                       // typo
		"delayRetry: soon",                        // not a duration
		"delayRetry: -5",                          // negative
		"queueSize: 0",                            // no room
		"startupResyncDeadline: 0",                // no deadline
		"eventLogLevel: loud",                     // no such level
		"externalSourcePrecedence: [a, a]",        // duplicate
		"maxAfterErrorHealingDelay: 1s",           // below delayAfterErrorHealing
		"maxFailedHealings: 0",                    // no healing at all
		"eventHistoryAgeLimit: 99999999999999999", // overflows
	} {
		if _, err := eventloop.ParseConfig([]byte(yml)); err == nil {
			t.Errorf("%q accepted", yml)
		} else if !strings.Contains(err.Error(), "eventloop") && !strings.Contains(err.Error(), "unknown field") {
			t.Errorf("%q: unclear error %v", yml, err)
		}
	}
	if _, err := eventloop.New(eventloop.Options{Config: &eventloop.Config{}}); err == nil {
		t.Fatal("New accepted the zero Config")
	}
}
