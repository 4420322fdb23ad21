package schedulerhttp

import (
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/lariat-dev/lariat/internal/historyquery"
	"github.com/lariat-dev/lariat/internal/httpjson"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Paths served by the handler, each with one method (GET, which includes
// HEAD, or POST for DownstreamResyncPath); a wrong method gets 405. The
// paths are matched whole: to serve the API below a prefix, strip it, e.g.
// mux.Handle("/debug/scheduler/", http.StripPrefix("/debug", New(s))).
const (
	// TxnHistoryPath serves the recorded transactions.
	TxnHistoryPath = "/scheduler/txn-history"
	// KeyTimelinePath serves the recorded events of one key.
	KeyTimelinePath = "/scheduler/key-timeline"
	// StatusPath serves value statuses.
	StatusPath = "/scheduler/status"
	// DumpPath serves the values known to the scheduler.
	DumpPath = "/scheduler/dump"
	// DownstreamResyncPath commits a downstream resync (POST).
	DownstreamResyncPath = "/scheduler/downstream-resync"
	// GraphPath serves the value graph.
	GraphPath = "/scheduler/graph"
	// GraphSnapshotPath serves the value graph at a past point.
	GraphSnapshotPath = "/scheduler/graph-snapshot"
)

// Option configures the handler returned by New.
type Option func(*handler)

// WithLookPath replaces exec.LookPath for finding Graphviz's dot, so that
// tests (and deployments with dot at a fixed place) control whether SVG
// rendering is available.
func WithLookPath(lookPath func(file string) (string, error)) Option {
	return func(h *handler) {
		if lookPath != nil {
			h.lookPath = lookPath
		}
	}
}

// WithRenderTimeout bounds how long dot may take to render the SVG graph
// (default ten seconds), so that a huge graph cannot hold a request forever.
func WithRenderTimeout(d time.Duration) Option {
	return func(h *handler) {
		if d > 0 {
			h.renderTimeout = d
		}
	}
}

type handler struct {
	s             *kvscheduler.Scheduler
	lookPath      func(string) (string, error)
	renderTimeout time.Duration
	// routes dispatches the requests by method and path.
	routes http.Handler
}

// Handler returns the scheduler's REST API with the default options, to be
// mounted by the user, e.g. mux.Handle("/scheduler/", schedulerhttp.Handler(s));
// below a prefix, with http.StripPrefix (see the paths).
func Handler(s *kvscheduler.Scheduler) http.Handler { return New(s) }

// New returns the scheduler's REST API. Every error is answered as JSON
// {"error": "..."}: 400 for invalid parameters, 404 for unknown keys,
// transactions and paths, 405 for a wrong method (with Allow), 501 for what
// cannot be served (see the endpoints). Requests are routed by method and
// whole path (see the paths); a trailing slash is ignored.
//
// GET /scheduler/txn-history: the recorded transactions as a JSON array of
// TxnJSON. seq-num=N selects one record (a single object; 404 if not
// recorded) and wins over the other selections, which apply in this order
// of precedence, the first one present being used: since=S and until=U
// (Unix seconds, inclusive, either may be left out); from=A and to=B
// (sequence numbers, inclusive, either may be left out); first=N (the N
// oldest kept records); last=N (the N newest). Every parameter present is
// checked, even if a preceding one wins, so that a typo is not silently
// ignored. Times (here and in graph and graph-snapshot) must lie in years 1
// to 9999 (Unix seconds -62135596800 to 253402300799): beyond them they
// would wrap around, so they get a 400 naming the parameter. format=text
// returns the transaction logs (TxnRecord.String) instead of JSON.
//
// GET /scheduler/key-timeline?key=K: the values requested for K, notified
// for it and the operations executed on it in the recorded transactions,
// oldest first, with its current status (404 if the key is neither known
// nor recorded).
//
// GET /scheduler/status: all statuses, those of descriptor=D, or the one of
// key=K (a single object; 404 if the key is unknown). Values carry their
// dependencies (met or not, with the keys satisfying them) and, when
// derived, their baseKey; PENDING values carry waitingFor, their unmet
// dependencies with the dependencies' own state.
//
// GET /scheduler/dump: the values known to the scheduler, filtered by
// descriptor=D and key-prefix=P, as a DumpView. view=cached (the default;
// view=internal is its VPP-Agent name) lists every value with a status, as
// the scheduler's graph holds it; view=NB the values last requested by the
// northbound; view=SB the values as last created, retrieved or notified in
// the southbound, including OBTAINED ones (see kvscheduler.DumpValues).
//
// POST /scheduler/downstream-resync: commits an empty downstream resync
// and returns its record as a ResyncResult (200 even when operations
// failed: the failures are in the record, and notRetrying lists those the
// scheduler will not retry; 503 if the scheduler is closed). It takes no
// parameter: retry= gets a 400, because the scheduler retries a value with
// the retry options of the transaction that set it (see ResyncResult).
//
// GET /scheduler/graph: the current values as a graph, with their
// dependencies (met: solid, unmet: dashed red) and derivations (dotted,
// from the derived value to its base) as edges; format=dot returns DOT, otherwise SVG rendered by
// Graphviz dot (501 if dot is not on PATH, 500 if it fails). txn=N
// highlights the values that transaction N changed (404 if not recorded).
// time=T (Unix seconds) draws the values as they were after the last
// transaction recorded at or before T instead of the current ones (see
// graph-snapshot for the errors).
//
// GET /scheduler/graph-snapshot: the values as they were after the last
// transaction recorded at or before time=T (Unix seconds), or right after
// transaction seq-num=N, as a GraphSnapshotJSON; one of the two is
// required (400 otherwise, or if malformed). Every value is included, not
// only those changed within the retained history; 404 when the point is
// before the oldest retained transaction (history is bounded by count and
// age), before the first transaction, or when history is disabled.
func New(s *kvscheduler.Scheduler, opts ...Option) http.Handler {
	h := &handler{
		s:             s,
		lookPath:      exec.LookPath,
		renderTimeout: 10 * time.Second,
	}
	for _, o := range opts {
		if o != nil {
			o(h)
		}
	}
	mux := http.NewServeMux()
	for pattern, serve := range map[string]func(http.ResponseWriter, *http.Request) error{
		"GET " + TxnHistoryPath:        h.txnHistory,
		"GET " + KeyTimelinePath:       h.keyTimeline,
		"GET " + StatusPath:            h.status,
		"GET " + DumpPath:              h.dump,
		"POST " + DownstreamResyncPath: h.downstreamResync,
		"GET " + GraphPath:             h.graph,
		"GET " + GraphSnapshotPath:     h.graphSnapshot,
	} {
		mux.Handle(pattern, endpoint(serve))
	}
	h.routes = httpjson.Mux(mux)
	return h
}

// badParam marks errors answered with 400.
type badParam struct{ error }

// notFound marks errors answered with 404.
type notFound struct{ error }

// ServeHTTP routes the request to its endpoint (see New).
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A nil scheduler is a wiring mistake; answer it instead of panicking.
	if h.s == nil {
		writeError(w, http.StatusServiceUnavailable, errors.New("no KV scheduler is attached to this handler"))
		return
	}
	h.routes.ServeHTTP(w, r)
}

// endpoint answers the error an endpoint returns with the status its type
// says.
func endpoint(serve func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := serve(w, r)
		if err == nil {
			return
		}
		var bp badParam
		var nf notFound
		switch {
		case errors.As(err, &bp):
			writeError(w, http.StatusBadRequest, err)
		case errors.As(err, &nf):
			writeError(w, http.StatusNotFound, err)
		default:
			writeError(w, http.StatusInternalServerError, err)
		}
	})
}

// oneOf returns the value of a parameter restricted to choices (the first
// one is the default), compared case-insensitively because the VPP-Agent
// documents both "NB" and "json".
func oneOf(r *http.Request, name string, choices ...string) (string, error) {
	q := r.URL.Query()
	if !q.Has(name) {
		return choices[0], nil
	}
	v := q.Get(name)
	for _, c := range choices {
		if strings.EqualFold(v, c) {
			return c, nil
		}
	}
	return "", badParam{fmt.Errorf("parameter %s: want one of %s, got %q", name, strings.Join(choices, ", "), v)}
}

func uintParam(r *http.Request, name string) (uint64, bool, error) {
	v, ok, err := historyquery.Uint(r.URL.Query(), name)
	if err != nil {
		return 0, true, badParam{err}
	}
	return v, ok, nil
}

func timeParam(r *http.Request, name string) (time.Time, bool, error) {
	t, ok, err := historyquery.UnixTime(r.URL.Query(), name)
	if err != nil {
		return time.Time{}, true, badParam{err}
	}
	return t, ok, nil
}
