package eventloop

import (
	"strings"
)

// The formats of Config.EventLogFormat.
const (
	// EventLogBoxes logs the seed's NEW EVENT and FINALIZED EVENT boxes.
	EventLogBoxes = "boxes"
	// EventLogLine logs one line per event, once it is finalized: an
	// operator that handles many events stays readable.
	EventLogLine = "line"
)

// logEventLine prints one line for a finalized event: its number and first
// line, the handlers, how long it took, and its errors.
func (l *Loop) logEventLine(rec *record) {
	rec.describe()
	var b strings.Builder
	b.WriteString("event ")
	b.WriteString(seqStr(rec.SeqNum))
	if rec.IsFollowUp {
		b.WriteString(" (follow-up to " + seqStr(rec.FollowUpTo) + ")")
	}
	first, _, _ := strings.Cut(rec.Description, "\n")
	b.WriteString(": " + first)
	var handled, reverted, errs []string
	for _, h := range rec.Handlers {
		if h.Revert {
			reverted = append(reverted, h.Handler)
		} else {
			handled = append(handled, h.Handler)
		}
		if h.Error != nil {
			msg, _, _ := strings.Cut(h.Error.Error(), "\n")
			errs = append(errs, h.Handler+": "+msg)
		}
	}
	if len(handled) == 0 {
		handled = []string{"<none>"}
	}
	b.WriteString("; handled by " + strings.Join(handled, ", "))
	b.WriteString(" in " + formatDuration(rec.ProcessingEnd.Sub(rec.ProcessingStart)))
	if len(errs) > 0 {
		b.WriteString("; errors: " + strings.Join(errs, "; "))
	}
	if len(reverted) > 0 {
		b.WriteString("; reverted by " + strings.Join(reverted, ", "))
	}
	if rec.TxnError != nil {
		msg, _, _ := strings.Cut(rec.TxnError.Error(), "\n")
		b.WriteString("; transaction error: " + msg)
	}
	l.log.Log(l.cfg.EventLogLevel, b.String())
}
