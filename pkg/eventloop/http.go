package eventloop

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lariat-dev/lariat/internal/httpjson"
)

// Paths served by the handler returned by Loop.HTTPHandler.
const (
	EventHistoryPath = "/controller/event-history"
	ResyncPath       = "/controller/resync"
)

// HTTPHandler returns the loop's REST API, to be mounted by the user, e.g.
// mux.Handle("/controller/", loop.HTTPHandler()). Requests are matched by
// path suffix, so the API may also be mounted below a prefix.
//
// GET /controller/event-history returns records of processed events as JSON.
// Its parameters are considered in this precedence (as in Contiv), the first
// one present wins:
//
//	seq-num=N         the record of event N (a single object; 404 if not recorded)
//	since=S, until=U  events processed (at least partly) between Unix times S and U, in seconds; either may be left out
//	from=A, to=B      events with sequence numbers A to B, inclusive; either may be left out
//	first=N           the N oldest records
//	last=N            the N latest records
//
// Without parameters it returns every record. Invalid parameters get a 400
// with {"error": "..."}.
//
// POST /controller/resync requests a resync (see Loop.RequestResync) and
// answers 202; it answers 503 when the request cannot be queued.
func (l *Loop) HTTPHandler() http.Handler { return httpHandler{l} }

type httpHandler struct{ l *Loop }

func (h httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasSuffix(r.URL.Path, EventHistoryPath):
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed", r.Method))
			return
		}
		h.history(w, r)
	case strings.HasSuffix(r.URL.Path, ResyncPath):
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed", r.Method))
			return
		}
		if err := h.l.RequestResync(r.Context()); err != nil {
			writeError(w, http.StatusServiceUnavailable, err)
			return
		}
		writeJSON(w, http.StatusAccepted, map[string]string{"status": "resync requested"})
	default:
		writeError(w, http.StatusNotFound, fmt.Errorf("no such resource: %s", r.URL.Path))
	}
}

func (h httpHandler) history(w http.ResponseWriter, r *http.Request) {
	hist := h.l.hist
	if !hist.Enabled() {
		writeError(w, http.StatusNotFound, fmt.Errorf("event history is not recorded (recordEventHistory is off)"))
		return
	}
	q := r.URL.Query()
	uintParam := func(name string) (v uint64, ok bool, err error) {
		if !q.Has(name) {
			return 0, false, nil
		}
		v, err = strconv.ParseUint(q.Get(name), 10, 64)
		if err != nil {
			return 0, true, fmt.Errorf("parameter %s: want a non-negative integer, got %q", name, q.Get(name))
		}
		return v, true, nil
	}
	timeParam := func(name string) (t time.Time, ok bool, err error) {
		if !q.Has(name) {
			return time.Time{}, false, nil
		}
		sec, err := strconv.ParseInt(q.Get(name), 10, 64)
		if err != nil {
			return time.Time{}, true, fmt.Errorf("parameter %s: want Unix seconds, got %q", name, q.Get(name))
		}
		return time.Unix(sec, 0), true, nil
	}
	bad := func(err error) { writeError(w, http.StatusBadRequest, err) }

	if seq, ok, err := uintParam("seq-num"); err != nil {
		bad(err)
		return
	} else if ok {
		rec, found := hist.Get(seq)
		if !found {
			writeError(w, http.StatusNotFound, fmt.Errorf("event #%d is not recorded", seq))
			return
		}
		writeJSON(w, http.StatusOK, rec)
		return
	}

	since, hasSince, err := timeParam("since")
	if err != nil {
		bad(err)
		return
	}
	until, hasUntil, err := timeParam("until")
	if err != nil {
		bad(err)
		return
	}
	if hasSince || hasUntil {
		if hasSince && hasUntil && until.Before(since) {
			bad(fmt.Errorf("until (%d) is before since (%d)", until.Unix(), since.Unix()))
			return
		}
		if hasUntil {
			// until is inclusive at the precision of the parameter.
			until = until.Add(time.Second - 1)
		}
		writeJSON(w, http.StatusOK, hist.Window(since, until))
		return
	}

	from, hasFrom, err := uintParam("from")
	if err != nil {
		bad(err)
		return
	}
	to, hasTo, err := uintParam("to")
	if err != nil {
		bad(err)
		return
	}
	if hasFrom || hasTo {
		if !hasTo {
			to = ^uint64(0)
		}
		if to < from {
			bad(fmt.Errorf("to (%d) is below from (%d)", to, from))
			return
		}
		writeJSON(w, http.StatusOK, hist.Range(from, to))
		return
	}

	for _, p := range []struct {
		name string
		get  func(int) []EventRecord
	}{{"first", hist.First}, {"last", hist.Last}} {
		n, ok, err := uintParam(p.name)
		if err != nil {
			bad(err)
			return
		}
		if ok {
			writeJSON(w, http.StatusOK, p.get(int(min(n, 1<<31))))
			return
		}
	}
	writeJSON(w, http.StatusOK, hist.Records())
}

func writeJSON(w http.ResponseWriter, status int, v any) { httpjson.Write(w, status, v) }

func writeError(w http.ResponseWriter, status int, err error) { httpjson.Error(w, status, err) }
