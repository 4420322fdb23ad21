package eventloop

import (
	"fmt"
	"net/http"

	"github.com/lariat-dev/lariat/internal/historyquery"
	"github.com/lariat-dev/lariat/internal/httpjson"
)

// Paths served by the handler returned by Loop.HTTPHandler.
const (
	// EventHistoryPath serves the records of processed events (GET).
	EventHistoryPath = "/controller/event-history"
	// ResyncPath requests a resync (POST).
	ResyncPath = "/controller/resync"
)

// HTTPHandler returns the loop's REST API, to be mounted by the user, e.g.
// mux.Handle("/controller/", loop.HTTPHandler()). Requests are routed by
// method and whole path, so a wrong method gets 405 (with Allow); to serve
// the API below a prefix, strip it, e.g.
// mux.Handle("/debug/controller/", http.StripPrefix("/debug", loop.HTTPHandler())).
// Errors are answered as JSON {"error": "..."}.
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
// Without parameters it returns every record. Every parameter present is
// checked, even one a preceding parameter overrides, so that a typo is not
// silently ignored. Invalid parameters get a 400 with {"error": "..."},
// naming the parameter; so do times outside years 1 to 9999 (Unix seconds
// -62135596800 to 253402300799), which would otherwise wrap around and
// select nothing or everything.
//
// POST /controller/resync requests a resync (see Loop.RequestResync) and
// answers 202; it answers 503 when the request cannot be queued.
func (l *Loop) HTTPHandler() http.Handler {
	h := httpHandler{l}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+EventHistoryPath, h.history)
	mux.HandleFunc("POST "+ResyncPath, h.resync)
	return httpjson.Mux(mux)
}

type httpHandler struct{ l *Loop }

func (h httpHandler) resync(w http.ResponseWriter, r *http.Request) {
	if err := h.l.RequestResync(r.Context()); err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "resync requested"})
}

func (h httpHandler) history(w http.ResponseWriter, r *http.Request) {
	hist := h.l.hist
	if !hist.Enabled() {
		writeError(w, http.StatusNotFound, fmt.Errorf("event history is not recorded (recordEventHistory is off)"))
		return
	}
	hq, err := historyquery.Parse(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	switch hq.Kind {
	case historyquery.One:
		rec, found := hist.Get(hq.SeqNum)
		if !found {
			writeError(w, http.StatusNotFound, fmt.Errorf("event #%d is not recorded", hq.SeqNum))
			return
		}
		writeJSON(w, http.StatusOK, rec)
	case historyquery.Window:
		writeJSON(w, http.StatusOK, hist.Window(hq.Since, hq.Until))
	case historyquery.Range:
		writeJSON(w, http.StatusOK, hist.Range(hq.From, hq.To))
	case historyquery.First:
		writeJSON(w, http.StatusOK, hist.First(int(min(hq.N, 1<<31))))
	case historyquery.Last:
		writeJSON(w, http.StatusOK, hist.Last(int(min(hq.N, 1<<31))))
	default:
		writeJSON(w, http.StatusOK, hist.Records())
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) { httpjson.Write(w, status, v) }

func writeError(w http.ResponseWriter, status int, err error) { httpjson.Error(w, status, err) }
