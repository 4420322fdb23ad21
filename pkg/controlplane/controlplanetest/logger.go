package controlplanetest

import (
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
)

// testLogger sends log lines to t.Log, so they show only for failing or
// verbose tests and are attributed to the right test.
func testLogger(t testing.TB) logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(testWriter{t})
	l.SetFormatter(&logrus.TextFormatter{DisableTimestamp: true})
	return l
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// QuietLogger returns a logger that drops everything below fatal, for the
// components a test builds whose reports it does not assert (a sharder, a
// member, a controller factory): their warnings about the faults the test
// injects would only bury the test's own output.
func QuietLogger() *logrus.Logger {
	l := logrus.New()
	l.SetLevel(logrus.FatalLevel)
	return l
}
