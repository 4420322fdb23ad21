package eventloop

import (
	"strconv"
	"strings"
	"time"
)

// The event boxes follow Contiv's layout: 130 columns, the sequence number
// right-aligned, descriptions split into lines of at most boxDescWidth.
const (
	boxWidth     = 130
	boxDescWidth = 110
)

var (
	newEventBorder       = strings.Repeat(">", boxWidth)
	finalizedEventBorder = strings.Repeat("<", boxWidth)
)

// boxesEnabled tells whether the event boxes would be printed; they are not
// even built otherwise.
func (l *Loop) boxesEnabled() bool {
	return l.log.Logger.IsLevelEnabled(l.cfg.EventLogLevel)
}

// boxLine writes "*   <left><padding><right> *".
func boxLine(b *strings.Builder, left, right string) {
	b.WriteString("*   ")
	b.WriteString(left)
	pad := boxWidth - 4 - 2 - len(left) - len(right)
	if right != "" {
		pad--
	}
	if pad > 0 {
		b.WriteString(strings.Repeat(" ", pad))
	}
	if right != "" {
		b.WriteByte(' ')
		b.WriteString(right)
	}
	b.WriteString(" *\n")
}

func seqStr(seq uint64) string { return "#" + strconv.FormatUint(seq, 10) }

// logNewEvent prints the NEW EVENT box.
func (l *Loop) logNewEvent(rec *record, sel []int) {
	rec.describe()
	var b strings.Builder
	b.WriteString(newEventBorder)
	b.WriteByte('\n')
	headline := "NEW EVENT"
	if rec.IsFollowUp {
		headline += " (follow-up to " + seqStr(rec.FollowUpTo) + ")"
	}
	headline += ": "
	lines := splitLines(rec.Description, boxDescWidth)
	boxLine(&b, headline+lines[0], seqStr(rec.SeqNum))
	indent := strings.Repeat(" ", len(headline))
	for _, ln := range lines[1:] {
		boxLine(&b, indent+ln, "")
	}
	if len(sel) > 0 {
		names := make([]string, len(sel))
		for i, idx := range sel {
			names[i] = l.names[idx]
		}
		boxLine(&b, "EVENT HANDLERS: "+strings.Join(names, ", "), "")
	}
	b.WriteString(newEventBorder)
	l.log.Log(l.cfg.EventLogLevel, "\n"+b.String())
}

// logFinalizedEvent prints the FINALIZED EVENT box.
func (l *Loop) logFinalizedEvent(rec *record) {
	rec.describe()
	var (
		b                     strings.Builder
		handledBy, revertedBy []string
		hasErrors             bool
	)
	for _, h := range rec.Handlers {
		if h.Error != nil {
			hasErrors = true
		}
		if h.Revert {
			revertedBy = append(revertedBy, h.Handler)
		} else {
			handledBy = append(handledBy, h.Handler)
		}
	}
	b.WriteString(finalizedEventBorder)
	b.WriteByte('\n')
	first, _, _ := strings.Cut(rec.Description, "\n")
	boxLine(&b, "FINALIZED EVENT: "+first, seqStr(rec.SeqNum))
	handlers := "<none>"
	if len(handledBy) > 0 {
		handlers = strings.Join(handledBy, ", ")
	}
	boxLine(&b, "HANDLED BY: "+handlers, "took "+formatDuration(rec.ProcessingEnd.Sub(rec.ProcessingStart)))
	if hasErrors {
		boxLine(&b, "ERRORS:", "")
		for _, h := range rec.Handlers {
			if h.Error == nil {
				continue
			}
			what := h.Handler
			if h.Revert {
				what += " (REVERT)"
			}
			for i, ln := range splitLines(what+": "+h.Error.Error(), boxDescWidth) {
				if i == 0 {
					boxLine(&b, "    * "+ln, "")
				} else {
					boxLine(&b, "      "+ln, "")
				}
			}
		}
	}
	if len(revertedBy) > 0 {
		boxLine(&b, "REVERTED BY: "+strings.Join(revertedBy, ", "), "")
	}
	if rec.TxnError != nil {
		boxLine(&b, "TRANSACTION ERROR: "+rec.TxnError.Error(), "")
	}
	b.WriteString(finalizedEventBorder)
	l.log.Log(l.cfg.EventLogLevel, "\n"+b.String())
}

// formatDuration rounds to milliseconds like Contiv, except below a
// millisecond, where that would print a useless "0s".
func formatDuration(d time.Duration) string {
	if d >= time.Millisecond {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// splitLines splits text at newlines and wraps lines longer than width at
// spaces (a single longer word stays whole), indenting the wrapped parts. It
// returns at least one line.
func splitLines(text string, width int) []string {
	const wrapIndent = "  "
	var out []string
	for _, line := range strings.Split(text, "\n") {
		for len(line) > width {
			cut := strings.LastIndexByte(line[:width+1], ' ')
			if cut <= len(wrapIndent) {
				if cut = strings.IndexByte(line[len(wrapIndent):], ' '); cut < 0 {
					break
				}
				cut += len(wrapIndent)
			}
			out = append(out, line[:cut])
			line = wrapIndent + strings.TrimLeft(line[cut+1:], " ")
		}
		out = append(out, line)
	}
	return out
}
