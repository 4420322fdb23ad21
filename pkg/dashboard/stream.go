package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// heartbeat keeps idle streams open through proxies.
const heartbeat = 15 * time.Second

// pace is the least time between two batches a stream client is sent:
// while an operator is busy, messages go out in batches rather than one
// write (and one wake-up of the writer) per change. A page needs no finer
// grain.
const pace = 200 * time.Millisecond

// Dropped returns how many stream messages were dropped, over all clients,
// because a client read slower than the operator worked.
func (d *Dashboard) Dropped() uint64 { return d.dropped.Load() }

// Clients returns the number of stream clients connected now.
func (d *Dashboard) Clients() int { return int(d.clients.Load()) }

// serveStream answers GET /ui/api/stream with Server-Sent Events:
//
//	hello    {"event": E, "txn": T, "run": R}: the newest event and transaction before the stream, and the run (Info.Run)
//	event    an Event the loop processed
//	txn      a StreamTxn the scheduler recorded, with the statuses it changed
//	dropped  {"dropped": N}: N messages were dropped here; reload what they carried
//
// event=E and txn=T (the newest the page has) make the stream start after
// them, so nothing falls between the page's first read and the stream;
// run=R says which run those numbers are of: when it is not this
// Dashboard's, the stream starts at the oldest recorded.
// The statuses come from the transactions' records
// (TxnRecord.ChangedStatuses), not from a status watch: the scheduler does
// no work for a client. The producers never wait for the client (see
// ring).
func (d *Dashboard) serveStream(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported by this server", http.StatusInternalServerError)
		return
	}
	if r.Method == http.MethodHead {
		d.headStream(w)
		return
	}
	// Read before the client is counted: a caller that sees it counted
	// (Clients) knows the stream starts after what was recorded then.
	evSeq, txnSeq := d.newest(r)
	if !d.acquireClient() {
		d.refuseStream(w)
		return
	}
	defer d.clients.Add(-1)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	buf := newRing(d.opts.StreamBuffer)
	push := func(event string, v any) {
		if buf.push(message{event: event, v: v}) {
			d.dropped.Add(1)
		}
	}
	skip := func(n int) {
		buf.skip(n)
		d.dropped.Add(uint64(n))
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	// The readers start before anything is written: a client that does
	// not read must not hold them up (its buffer drops instead).
	go d.pollHistories(ctx, evSeq, txnSeq, push, skip)
	// hello is written first, by this goroutine, not through the ring: the
	// page's only sign that it is live must not be the oldest message a
	// backlog larger than the buffer drops.
	hello, _ := json.Marshal(map[string]any{"event": evSeq, "txn": txnSeq, "run": d.run})
	if _, err := fmt.Fprintf(w, "event: hello\ndata: %s\n\n", hello); err != nil {
		return
	}
	flusher.Flush()
	d.sendMessages(ctx, w, flusher, buf)
}

// sendMessages writes the messages of buf to the stream as they come, a
// drop marker before those that follow dropped ones, and a keep-alive
// comment every heartbeat, until ctx ends or a write fails.
func (d *Dashboard) sendMessages(ctx context.Context, w http.ResponseWriter, flusher http.Flusher, buf *ring) {
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		case <-buf.signal:
			msgs, dropped := buf.take()
			if dropped > 0 {
				if _, err := fmt.Fprintf(w, "event: dropped\ndata: {\"dropped\":%d}\n\n", dropped); err != nil {
					return
				}
			}
			for _, m := range msgs {
				data, err := json.Marshal(d.encode(m.v))
				if err != nil {
					continue
				}
				if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", m.event, data); err != nil {
					return
				}
			}
			flusher.Flush()
			select {
			case <-ctx.Done():
				return
			case <-time.After(pace):
			}
		}
	}
}

// headStream answers HEAD /ui/api/stream with the headers a GET would get
// now, and opens no stream: a HEAD answer has no body, so net/http
// discards the stream's writes, none of them ever fails, and nothing would
// end a stream whose client went away (its slot and reader held for
// good). It counts no client.
func (d *Dashboard) headStream(w http.ResponseWriter) {
	if d.clients.Load() >= int64(d.opts.MaxStreamClients) {
		d.refuseStream(w)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

// refuseStream answers a stream over the cap (Options.MaxStreamClients).
func (d *Dashboard) refuseStream(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "5")
	http.Error(w, fmt.Sprintf("the dashboard serves at most %d live streams at once (Options.MaxStreamClients): close another of its pages, or raise the cap", d.opts.MaxStreamClients), http.StatusServiceUnavailable)
}

// acquireClient counts a new stream client unless MaxStreamClients are
// connected already.
func (d *Dashboard) acquireClient() bool {
	for {
		n := d.clients.Load()
		if n >= int64(d.opts.MaxStreamClients) {
			return false
		}
		if d.clients.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// newest returns the sequence numbers the stream starts after: the page's,
// or the newest recorded (-1: none).
func (d *Dashboard) newest(r *http.Request) (event, txn int64) {
	event, txn = -1, -1
	if d.opts.Loop != nil {
		if last := d.opts.Loop.History().Last(1); len(last) == 1 {
			event = int64(last[0].SeqNum)
		}
	}
	txn = d.newestTxn()
	q := r.URL.Query()
	if run := q.Get("run"); run != "" && run != d.run {
		// The page's numbers are another run's: it is sent everything
		// still recorded (what does not fit is counted as dropped).
		return -1, -1
	}
	if n, err := strconv.ParseInt(q.Get("event"), 10, 64); err == nil && n >= -1 && n <= event {
		event = n
	}
	if n, err := strconv.ParseInt(q.Get("txn"), 10, 64); err == nil && n >= -1 && n <= txn {
		txn = n
	}
	return event, txn
}

// maxStreamStatuses bounds the statuses sent with one transaction; a
// transaction that changed more (a resync of a large graph) is sent with
// Reload set instead.
const maxStreamStatuses = 500

// StreamTxn is a transaction on the stream: the Txn with the values whose
// status it changed (state REMOVED: the value is gone).
type StreamTxn struct {
	Txn
	Statuses []Node `json:"statuses,omitempty"`
	// Reload says the transaction changed too many values to send: read
	// the graph again.
	Reload bool `json:"reload,omitempty"`
}

// encode turns a buffered record into what the page reads.
func (d *Dashboard) encode(v any) any {
	switch v := v.(type) {
	case eventloop.EventRecord:
		return d.encodeEvent(v)
	case *kvscheduler.TxnRecord:
		out := StreamTxn{Txn: d.encodeTxn(v)}
		sts := v.ChangedStatuses()
		if len(sts) > maxStreamStatuses {
			out.Reload = true
			return out
		}
		s := d.opts.Scheduler
		stateOf := func(k string) (kvscheduler.ValueState, bool) { return s.GetValueStatus(k).State, true }
		for _, st := range sts {
			out.Statuses = append(out.Statuses, d.node(st, stateOf))
		}
		return out
	}
	return v
}

// pollHistories pushes the events and transactions recorded after evSeq
// and txnSeq, reading the histories every PollInterval: the loop and the
// scheduler record as they always do and never know a client exists.
func (d *Dashboard) pollHistories(ctx context.Context, evSeq, txnSeq int64, push func(string, any), skip func(int)) {
	tick := time.NewTicker(d.opts.PollInterval)
	defer tick.Stop()
	var since time.Time
	for {
		if d.opts.Loop != nil {
			evSeq = d.pollEvents(evSeq, push, skip)
		}
		for _, rec := range d.opts.Scheduler.TransactionHistory(since, time.Time{}) {
			if int64(rec.SeqNum) <= txnSeq {
				continue
			}
			// Transactions are numbered without gaps: a gap is what the
			// scheduler trimmed (count, age) before this reader got to it.
			countGap(int64(rec.SeqNum), txnSeq, skip)
			push("txn", rec)
			txnSeq = int64(rec.SeqNum)
			// Stop times may go back with the wall clock; the margin
			// keeps those records in the next read, the seq skips them.
			since = rec.Stop.Add(-time.Minute)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// pollEvents pushes the events recorded after evSeq and returns the newest
// one's number. When there are more than the client's buffer holds, only
// the newest that fit are copied out of the history; the others are
// counted as dropped without being made (a busy loop with a slow client
// costs no copy of every event).
func (d *Dashboard) pollEvents(evSeq int64, push func(string, any), skip func(int)) int64 {
	h := d.opts.Loop.History()
	last := h.Last(1)
	if len(last) == 0 || int64(last[0].SeqNum) <= evSeq {
		return evSeq
	}
	newest := int64(last[0].SeqNum)
	var recs []eventloop.EventRecord
	if newest-evSeq > int64(d.opts.StreamBuffer) {
		recs = h.Range(uint64(newest)-uint64(d.opts.StreamBuffer)+1, uint64(newest))
	} else {
		recs = h.Range(uint64(evSeq+1), math.MaxUint64)
	}
	// Events are numbered without gaps: what is missing before or between
	// the records copied is what was left out above, or what the history
	// forgot (its count or age limit) before this reader got to it.
	for _, rec := range recs {
		countGap(int64(rec.SeqNum), evSeq, skip)
		push("event", rec)
		evSeq = int64(rec.SeqNum)
	}
	countGap(newest+1, evSeq, skip)
	return max(evSeq, newest)
}

// countGap counts as dropped the records numbered between after and seq
// (both excluded), which the client will never be sent.
func countGap(seq, after int64, skip func(int)) {
	if seq > after+1 {
		skip(int(seq - after - 1))
	}
}
