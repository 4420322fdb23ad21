package schedulerhttp

import (
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lariat-dev/lariat/internal/historyquery"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Paths served by the handler. Requests are matched by path suffix, as by
// the event loop's handler, so the API may be mounted below a prefix.
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

// WithResyncRetry sets the retry options given to the transaction of
// POST /scheduler/downstream-resync?retry=true. The default retries three
// times with exponential backoff from one second, because an unbounded
// retry of a resync requested by hand would outlive its purpose. The
// scheduler currently retries with the options of the transaction that set
// each value instead (see ResyncResult).
func WithResyncRetry(o kvscheduler.RetryOptions) Option {
	return func(h *handler) { h.resyncRetry = o }
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
	resyncRetry   kvscheduler.RetryOptions
	renderTimeout time.Duration
}

// Handler returns the scheduler's REST API with the default options, to be
// mounted by the user, e.g. mux.Handle("/scheduler/", schedulerhttp.Handler(s)).
func Handler(s *kvscheduler.Scheduler) http.Handler { return New(s) }

// New returns the scheduler's REST API. Every error is answered as JSON
// {"error": "..."}: 400 for invalid parameters, 404 for unknown keys,
// transactions and paths, 405 for a wrong method, 501 for what cannot be
// served (see the endpoints).
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
// would wrap around, so they get a 400 naming the parameter. format=text returns the transaction logs (TxnRecord.String)
// instead of JSON.
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
// failed: the failures are in the record; 503 if the scheduler is closed).
// retry=true passes WithResyncRetry's options to the transaction; see
// ResyncResult for why the scheduler may not retry anyway.
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
		resyncRetry:   kvscheduler.RetryOptions{Period: time.Second, MaxAttempts: 3, ExpBackoff: true},
		renderTimeout: 10 * time.Second,
	}
	for _, o := range opts {
		if o != nil {
			o(h)
		}
	}
	return h
}

// badParam marks errors answered with 400.
type badParam struct{ error }

// notFound marks errors answered with 404.
type notFound struct{ error }

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A nil scheduler is a wiring mistake; answer it instead of panicking.
	if h.s == nil {
		writeError(w, http.StatusServiceUnavailable, errors.New("no KV scheduler is attached to this handler"))
		return
	}
	type route struct {
		path  string
		post  bool
		serve func(http.ResponseWriter, *http.Request) error
	}
	routes := []route{
		{TxnHistoryPath, false, h.txnHistory},
		{KeyTimelinePath, false, h.keyTimeline},
		{StatusPath, false, h.status},
		{DumpPath, false, h.dump},
		{DownstreamResyncPath, true, h.downstreamResync},
		{GraphPath, false, h.graph},
		{GraphSnapshotPath, false, h.graphSnapshot},
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	for _, rt := range routes {
		if !strings.HasSuffix(path, rt.path) {
			continue
		}
		allowed := r.Method == http.MethodGet || r.Method == http.MethodHead
		allow := "GET, HEAD"
		if rt.post {
			allowed, allow = r.Method == http.MethodPost, "POST"
		}
		if !allowed {
			w.Header().Set("Allow", allow)
			writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed on %s", r.Method, rt.path))
			return
		}
		if err := rt.serve(w, r); err != nil {
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
		}
		return
	}
	writeError(w, http.StatusNotFound, fmt.Errorf("no such resource: %s", r.URL.Path))
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

func boolParam(r *http.Request, name string) (bool, error) {
	q := r.URL.Query()
	if !q.Has(name) {
		return false, nil
	}
	v, err := strconv.ParseBool(q.Get(name))
	if err != nil {
		return false, badParam{fmt.Errorf("parameter %s: want true/false or 1/0, got %q", name, q.Get(name))}
	}
	return v, nil
}

func (h *handler) txnHistory(w http.ResponseWriter, r *http.Request) error {
	format, err := oneOf(r, "format", "json", "text")
	if err != nil {
		return err
	}
	hq, err := historyquery.Parse(r.URL.Query())
	if err != nil {
		return badParam{err}
	}
	var recs []*kvscheduler.TxnRecord
	single := false
	switch hq.Kind {
	case historyquery.One:
		rec, found := h.s.GetRecordedTransaction(hq.SeqNum)
		if !found {
			return notFound{fmt.Errorf("transaction #%d is not recorded", hq.SeqNum)}
		}
		recs, single = []*kvscheduler.TxnRecord{rec}, true
	case historyquery.Window:
		recs = h.s.TransactionHistory(hq.Since, hq.Until)
	case historyquery.Range:
		for _, rec := range h.s.TransactionHistory(time.Time{}, time.Time{}) {
			if rec.SeqNum >= hq.From && rec.SeqNum <= hq.To {
				recs = append(recs, rec)
			}
		}
	case historyquery.First:
		recs = h.s.TransactionHistory(time.Time{}, time.Time{})
		recs = recs[:min(uint64(len(recs)), hq.N)]
	case historyquery.Last:
		recs = h.s.TransactionHistory(time.Time{}, time.Time{})
		recs = recs[uint64(len(recs))-min(uint64(len(recs)), hq.N):]
	default:
		recs = h.s.TransactionHistory(time.Time{}, time.Time{})
	}
	if format == "text" {
		var b strings.Builder
		for _, rec := range recs {
			b.WriteString(rec.String())
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(b.String()))
		return nil
	}
	if single {
		writeJSON(w, http.StatusOK, encodeTxn(recs[0]))
		return nil
	}
	out := make([]TxnJSON, 0, len(recs))
	for _, rec := range recs {
		out = append(out, encodeTxn(rec))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// The events of a key's timeline.
const (
	// EventRequested is a value (or, with Removed, a deletion) requested by
	// a northbound transaction; what happened to it is in the following
	// executed events, or in the status if it is still waiting.
	EventRequested = "requested"
	// EventNotified is a value (or, with Removed, a removal) notified by
	// the southbound.
	EventNotified = "notified"
	// EventExecuted is an operation executed on the key.
	EventExecuted = "executed"
)

// TimelineEntry is one event of a key in a recorded transaction.
type TimelineEntry struct {
	SeqNum     uint64    `json:"seqNum"`
	TxnType    string    `json:"txnType"`
	ResyncType string    `json:"resyncType,omitempty"`
	Time       time.Time `json:"time"`
	// Event is EventRequested, EventNotified or EventExecuted.
	Event string `json:"event"`
	// Value is the requested or notified value.
	Value any `json:"value,omitempty"`
	// Removed marks a requested deletion or a notified removal.
	Removed bool `json:"removed,omitempty"`
	// OpJSON is the executed operation.
	*OpJSON
}

// KeyTimeline is the answer of GET /scheduler/key-timeline. It is built
// from the recorded transactions, so it only reaches back as far as the
// history is kept, and it does not show changes that a refresh (Retrieve)
// found, because records do not list them.
type KeyTimeline struct {
	Key      string          `json:"key"`
	Current  StatusJSON      `json:"current"`
	Timeline []TimelineEntry `json:"timeline"`
}

func (h *handler) keyTimeline(w http.ResponseWriter, r *http.Request) error {
	key := r.URL.Query().Get("key")
	if key == "" {
		return badParam{errors.New("parameter key is required")}
	}
	out := KeyTimeline{Key: key, Current: h.explain(h.s.GetValueStatus(key)), Timeline: []TimelineEntry{}}
	for _, rec := range h.s.TransactionHistory(time.Time{}, time.Time{}) {
		base := TimelineEntry{SeqNum: rec.SeqNum, TxnType: rec.Type.String(), Time: rec.Stop}
		if rec.Resync != kvscheduler.NoResync {
			base.ResyncType = rec.Resync.String()
		}
		// A downstream resync ignores its values: they were not requested.
		if rec.Resync != kvscheduler.DownstreamResync {
			for _, kv := range rec.Values {
				if kv.Key != key {
					continue
				}
				e := base
				e.Event, e.Value, e.Removed = EventRequested, jsonValue(kv.Value), kv.Value == nil
				if rec.Type == kvscheduler.SBNotification {
					e.Event = EventNotified
				}
				out.Timeline = append(out.Timeline, e)
			}
		}
		for _, op := range rec.Executed {
			if op.Key != key {
				continue
			}
			e := base
			oj := encodeOp(op)
			e.Event, e.OpJSON = EventExecuted, &oj
			out.Timeline = append(out.Timeline, e)
		}
	}
	if len(out.Timeline) == 0 && out.Current.State == kvscheduler.NonExistent.String() {
		return notFound{fmt.Errorf("key %q is unknown and not in the recorded transactions", key)}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *handler) status(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if q.Has("key") && q.Has("descriptor") {
		return badParam{errors.New("parameters key and descriptor are exclusive")}
	}
	if q.Has("key") {
		key := q.Get("key")
		if key == "" {
			return badParam{errors.New("parameter key must not be empty")}
		}
		st := h.s.GetValueStatus(key)
		if st.State == kvscheduler.NonExistent {
			return notFound{fmt.Errorf("key %q is unknown to the scheduler", key)}
		}
		writeJSON(w, http.StatusOK, h.explain(st))
		return nil
	}
	var sts []kvscheduler.ValueStatus
	if q.Has("descriptor") {
		desc := q.Get("descriptor")
		if desc == "" {
			return badParam{errors.New("parameter descriptor must not be empty")}
		}
		// The scheduler has no lookup by descriptor: filter all statuses.
		for _, st := range h.s.ValueStatuses(nil) {
			if st.Descriptor == desc {
				sts = append(sts, st)
			}
		}
	} else {
		sts = h.s.ValueStatuses(nil)
	}
	out := make([]StatusJSON, 0, len(sts))
	for _, st := range sts {
		out = append(out, h.explain(st))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// anyOfPrefix starts the name the scheduler gives an unlabeled any-of
// dependency.
const anyOfPrefix = "any-of"

// explain encodes st and, for a PENDING value, resolves what it waits for.
// The status's dependency list tells labeled dependencies from keys and
// names the candidates of any-of dependencies; a name it does not describe
// (the base of a derived value) is resolved from the name alone.
func (h *handler) explain(st kvscheduler.ValueStatus) StatusJSON {
	out := encodeStatus(st)
	if st.State != kvscheduler.Pending {
		return out
	}
	described := make(map[string]kvscheduler.DependencyStatus, len(st.Dependencies))
	for _, d := range st.Dependencies {
		if !d.Met {
			described[d.Label] = d
		}
	}
	for _, dep := range st.UnmetDependencies {
		if d, ok := described[dep]; ok {
			out.WaitingFor = append(out.WaitingFor, h.resolveDescribed(d))
			continue
		}
		out.WaitingFor = append(out.WaitingFor, h.resolveDependency(dep))
	}
	return out
}

// resolveDescribed explains an unmet dependency from its description.
func (h *handler) resolveDescribed(dep kvscheduler.DependencyStatus) DependencyJSON {
	d := DependencyJSON{Dependency: dep.Label}
	if dep.Key != "" {
		ds := h.s.GetValueStatus(dep.Key)
		d.Key, d.State, d.Error = dep.Key, ds.State.String(), errString(ds.Error)
		if ds.State == kvscheduler.Pending {
			d.UnmetDependencies = ds.UnmetDependencies
		}
		return d
	}
	seen := map[string]bool{}
	for _, k := range dep.Keys {
		seen[k] = true
		d.Candidates = append(d.Candidates, KeyStateJSON{Key: k, State: h.s.GetValueStatus(k).State.String()})
	}
	// Only an unlabeled any-of dependency carries its prefixes in its name;
	// with them, values that never joined the graph (INVALID, FAILED, ...)
	// are shown too, since they explain why nothing matches.
	if strings.HasPrefix(dep.Label, anyOfPrefix) {
		byName := h.resolveDependency(dep.Label)
		d.AnyOfPrefixes = byName.AnyOfPrefixes
		for _, c := range byName.Candidates {
			if !seen[c.Key] {
				d.Candidates = append(d.Candidates, c)
			}
		}
		sort.Slice(d.Candidates, func(i, j int) bool { return d.Candidates[i].Key < d.Candidates[j].Key })
	}
	return d
}

func (h *handler) resolveDependency(dep string) DependencyJSON {
	d := DependencyJSON{Dependency: dep}
	// A key equal to the any-of name is taken as a key: it is the more
	// specific reading.
	if ds := h.s.GetValueStatus(dep); ds.State != kvscheduler.NonExistent || !strings.HasPrefix(dep, anyOfPrefix) {
		d.Key, d.State, d.Error = dep, ds.State.String(), errString(ds.Error)
		if ds.State == kvscheduler.Pending {
			d.UnmetDependencies = ds.UnmetDependencies
		}
		return d
	}
	prefixes := strings.Split(strings.TrimPrefix(dep, anyOfPrefix), "|")
	d.AnyOfPrefixes = prefixes
	for _, st := range h.s.ValueStatuses(func(k string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(k, p) {
				return true
			}
		}
		return false
	}) {
		d.Candidates = append(d.Candidates, KeyStateJSON{Key: st.Key, State: st.State.String()})
	}
	return d
}

// DumpEntry is one value in GET /scheduler/dump: the value of the
// requested view with the key's current status.
//
// ValueSeqNum is the last recorded transaction that created, updated or
// notified the key, to tell how old the value is; it is empty when that
// happened before the kept history or in a refresh, which records do not
// list.
type DumpEntry struct {
	StatusJSON
	// Value is the value in the view; empty for a cached value whose value
	// the scheduler does not keep (a derived value rejected before it
	// joined the graph).
	Value any `json:"value,omitempty"`
	// Metadata is the value's metadata, for values that exist.
	Metadata any `json:"metadata,omitempty"`
	// Origin is "NB" or "SB": who owns the value.
	Origin      string `json:"origin,omitempty"`
	ValueSeqNum uint64 `json:"valueSeqNum,omitempty"`
}

// DumpView is the answer of GET /scheduler/dump.
type DumpView struct {
	// View is "cached", "NB" or "SB".
	View   string      `json:"view"`
	Values []DumpEntry `json:"values"`
	// Metadata is the metadata map (label to metadata) of the requested
	// descriptor, if it keeps one.
	Metadata map[string]any `json:"metadata,omitempty"`
}

func (h *handler) dump(w http.ResponseWriter, r *http.Request) error {
	view, err := oneOf(r, "view", "cached", "NB", "SB", "internal")
	if err != nil {
		return err
	}
	if view == "internal" {
		view = "cached"
	}
	kview := map[string]kvscheduler.View{"cached": kvscheduler.CachedView, "NB": kvscheduler.NBView,
		"SB": kvscheduler.SBView}[view]
	q := r.URL.Query()
	desc, prefix := q.Get("descriptor"), q.Get("key-prefix")
	kvs := h.s.DumpValues(desc, prefix, kview)
	last := lastValues(h.s.TransactionHistory(time.Time{}, time.Time{}))
	out := DumpView{View: view, Values: []DumpEntry{}}
	entry := func(st kvscheduler.ValueStatus, kv *kvscheduler.KVWithMetadata) DumpEntry {
		e := DumpEntry{StatusJSON: h.explain(st)}
		if kv != nil {
			e.Value, e.Metadata, e.Origin = jsonValue(kv.Value), jsonValue(kv.Metadata), originName(kv.Origin)
		}
		e.ValueSeqNum = last[st.Key]
		return e
	}
	if kview == kvscheduler.CachedView {
		// Every status is listed, even one without a value, because the
		// cached view is the one that explains the statuses.
		byKey := make(map[string]*kvscheduler.KVWithMetadata, len(kvs))
		for i := range kvs {
			byKey[kvs[i].Key] = &kvs[i]
		}
		for _, st := range h.s.ValueStatuses(func(k string) bool { return strings.HasPrefix(k, prefix) }) {
			if desc != "" && st.Descriptor != desc {
				continue
			}
			out.Values = append(out.Values, entry(st, byKey[st.Key]))
		}
	} else {
		for i := range kvs {
			out.Values = append(out.Values, entry(h.s.GetValueStatus(kvs[i].Key), &kvs[i]))
		}
	}
	if desc != "" {
		if mm, ok := h.s.MetadataMap(desc); ok {
			out.Metadata = map[string]any{}
			for _, l := range mm.Labels() {
				if md, ok := mm.Get(l); ok {
					out.Metadata[l] = jsonValue(md)
				}
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// originName names an origin in JSON; an unknown origin is left out.
func originName(o kvscheduler.Origin) string {
	switch o {
	case kvscheduler.FromNB:
		return "NB"
	case kvscheduler.FromSB:
		return "SB"
	}
	return ""
}

// lastValues replays the southbound notifications and executed
// operations of recs (oldest first): the transaction that last created,
// updated or notified each key, unless it was deleted since.
func lastValues(recs []*kvscheduler.TxnRecord) map[string]uint64 {
	out := map[string]uint64{}
	for _, rec := range recs {
		if rec.Type == kvscheduler.SBNotification {
			for _, kv := range rec.Values {
				if kv.Value == nil {
					delete(out, kv.Key)
				} else {
					out[kv.Key] = rec.SeqNum
				}
			}
		}
		for _, op := range rec.Executed {
			if op.Err != nil {
				continue
			}
			switch op.Operation {
			case kvscheduler.OpCreate, kvscheduler.OpUpdate:
				out[op.Key] = rec.SeqNum
			case kvscheduler.OpDelete:
				delete(out, op.Key)
			}
		}
	}
	return out
}

func (h *handler) downstreamResync(w http.ResponseWriter, r *http.Request) error {
	retry, err := boolParam(r, "retry")
	if err != nil {
		return err
	}
	txn := h.s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).
		WithDescription("downstream resync requested over REST")
	if retry {
		txn = txn.WithRetry(h.resyncRetry)
	}
	rec, err := txn.Commit(r.Context())
	if rec == nil {
		if err == nil {
			err = errors.New("the scheduler returned no transaction record")
		}
		writeError(w, http.StatusServiceUnavailable, err)
		return nil
	}
	// Failed operations are in the record; the resync itself happened.
	out := ResyncResult{TxnJSON: encodeTxn(rec)}
	if retry {
		out.NotRetrying = notRetrying(h.s, rec)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// ResyncResult is the answer of POST /scheduler/downstream-resync: the
// record of the resync.
//
// NotRetrying lists, when retry=true was asked, the keys whose operations
// failed in the resync and are not RETRYING now. The scheduler applies the
// retry options of the transaction that last set each value, not those of
// the resync, so retry=true cannot make it retry them; the list tells the
// caller instead of leaving it to believe they will be retried.
type ResyncResult struct {
	TxnJSON
	NotRetrying []string `json:"notRetrying,omitempty"`
}

func notRetrying(s *kvscheduler.Scheduler, rec *kvscheduler.TxnRecord) []string {
	var out []string
	seen := map[string]bool{}
	for _, op := range rec.Executed {
		if op.Err == nil || seen[op.Key] {
			continue
		}
		seen[op.Key] = true
		if s.GetValueStatus(op.Key).State != kvscheduler.Retrying {
			out = append(out, op.Key)
		}
	}
	return out
}

// snapshotError maps a point the scheduler's history does not cover to
// 404: the request is well-formed, the data is just not kept.
func snapshotError(err error) error {
	if errors.Is(err, kvscheduler.ErrOutsideHistory) {
		return notFound{err}
	}
	return err
}

func (h *handler) graphSnapshot(w http.ResponseWriter, r *http.Request) error {
	t, byTime, err := timeParam(r, "time")
	if err != nil {
		return err
	}
	seq, bySeq, err := uintParam(r, "seq-num")
	if err != nil {
		return err
	}
	var snap kvscheduler.GraphSnapshot
	switch {
	case byTime && bySeq:
		return badParam{errors.New("parameters time and seq-num are exclusive")}
	case byTime:
		snap, err = h.s.GraphSnapshot(t)
	case bySeq:
		snap, err = h.s.GraphSnapshotAt(seq)
	default:
		return badParam{errors.New("parameter time (Unix seconds) or seq-num is required")}
	}
	if err != nil {
		return snapshotError(err)
	}
	out := GraphSnapshotJSON{SeqNum: snap.SeqNum, Time: snap.Time, Values: make([]StatusJSON, 0, len(snap.Values))}
	for _, st := range snap.Values {
		out.Values = append(out.Values, encodeStatus(st))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
