package kvscheduler_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// txnLog runs two transactions (one create, then one failed create) on a
// scheduler logging at debug in format, and returns what it logged.
func txnLog(t *testing.T, format string) string {
	t.Helper()
	var buf bytes.Buffer
	log := logrus.New()
	log.SetOutput(&buf)
	log.SetLevel(logrus.DebugLevel)
	log.SetFormatter(&logrus.TextFormatter{DisableTimestamp: true, DisableQuote: true})
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{Logger: log, TxnLogFormat: format, HistoryMaxCount: -1})
	register(t, s, sb.Descriptor("a", "a/"))
	mustSet(t, s, "a/1", "one")
	sb.FailNext("create", "a/2", errors.New("refused\nsecond line"))
	_ = set(t, s, "a/2", "two")
	// Close ends the scheduler's goroutine, the logger's only writer.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestTxnLogIsOneLinePerTransaction: by default the scheduler logs one
// line per transaction, with what ran and its errors to their first line.
func TestTxnLogIsOneLinePerTransaction(t *testing.T) {
	out := txnLog(t, "")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines for 2 transactions:\n%s", len(lines), out)
	}
	if !strings.Contains(lines[0], "txn #0 (NB transaction): CREATE 1") {
		t.Errorf("first transaction's line: %s", lines[0])
	}
	if !strings.Contains(lines[1], "txn #1") || !strings.Contains(lines[1], "errors: ") || !strings.Contains(lines[1], "refused") {
		t.Errorf("failed transaction's line does not say its error: %s", lines[1])
	}
}

// TestTxnLogBoxesStayAvailable: TxnLogBoxes logs the reference's box.
func TestTxnLogBoxesStayAvailable(t *testing.T) {
	out := txnLog(t, kvscheduler.TxnLogBoxes)
	if !strings.Contains(out, "Transaction #0") || !strings.Contains(out, "executed operations") ||
		strings.Count(out, "\n") < 10 {
		t.Errorf("no transaction box:\n%s", out)
	}
}

// TestTxnLogFormatIsValidated: an unknown format is refused.
func TestTxnLogFormatIsValidated(t *testing.T) {
	if _, err := kvscheduler.New(kvscheduler.Options{TxnLogFormat: "yaml"}); !errors.Is(err, kvscheduler.ErrInvalidOptions) {
		t.Errorf("New with TxnLogFormat yaml: %v, want ErrInvalidOptions", err)
	}
}
