package dashboard

import (
	"crypto/rand"
	"embed"
	"io/fs"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// Path is where Mount serves the dashboard.
const Path = "/ui/"

//go:embed assets
var assets embed.FS

// Scheduler is the read-only introspection of a KV scheduler the dashboard
// uses; *kvscheduler.Scheduler implements it.
type Scheduler interface {
	// ValueStatuses returns the statuses of the keys selector accepts (all
	// keys if nil), sorted by key.
	ValueStatuses(selector func(key string) bool) []kvscheduler.ValueStatus
	// GetValueStatus returns the status of the value of key.
	GetValueStatus(key string) kvscheduler.ValueStatus
	// TransactionHistory returns the recorded transactions that finished
	// within [since, until]; zero times are open bounds.
	TransactionHistory(since, until time.Time) []*kvscheduler.TxnRecord
	// GraphSnapshotAt returns the value graph right after the recorded
	// transaction seq.
	GraphSnapshotAt(seq uint64) (kvscheduler.GraphSnapshot, error)
	// DumpValues returns the values of view handled by descriptor whose
	// keys start with keyPrefix (empty strings select everything).
	DumpValues(descriptor, keyPrefix string, view kvscheduler.View) []kvscheduler.KVWithMetadata
}

// EventLoop is the read-only introspection of an event loop the dashboard
// uses; *eventloop.Loop implements it.
type EventLoop interface {
	// Status returns a snapshot of the loop.
	Status() eventloop.Status
	// History returns the record of processed events.
	History() *eventloop.History
}

// Options configure a Dashboard. Every source may be left out, and its
// view then says it is not available: an operator that runs no KV
// scheduler (controllers only) still gets the controllers, events and
// replicas views.
type Options struct {
	// Title names the operator in the page's heading.
	Title string
	// Scheduler is the KV scheduler whose values the graph shows; without
	// one, the page has no graph.
	Scheduler Scheduler
	// Loop, when set, feeds the events view and the loop's line of the
	// controllers view.
	Loop EventLoop
	// Metrics are read for the controllers view (lariat_queue_*,
	// lariat_handler_*, lariat_cache_objects).
	Metrics prometheus.Gatherer
	// Replicas, when set, is called for the replicas view (unless Shard
	// is set).
	Replicas func() Replicas
	// Shard, when set, makes the replicas view a sharded replica's: the
	// ring's sharder in this replica (a *shard.Sharder), whose snapshot
	// gives the members, their shares and the drains in flight when it is
	// the elected one.
	Shard Shard
	// ShardMember, with Shard, returns this replica's member of the ring
	// now (a *shard.Member), or a nil interface between terms: shard.Join
	// makes a member per term.
	ShardMember func() ShardMember
	// OwnerOf returns the owner of a key (e.g. the WebApp whose object it
	// is) for grouping; nil groups by descriptor only.
	OwnerOf func(key string) string
	// RedactKinds are the kinds whose objects are shown only by name,
	// namespace and labels. Secrets are always redacted so.
	RedactKinds []schema.GroupKind
	// RedactKeyPrefixes redact the values of the keys with these prefixes
	// entirely (values that are not Kubernetes objects).
	RedactKeyPrefixes []string
	// StreamBuffer is the number of messages buffered for one stream
	// client before the oldest are dropped; 0 means 256.
	StreamBuffer int
	// AllowedHosts are the host names (the Host header, without or with
	// the port) the dashboard answers besides IP addresses, "localhost"
	// and its subdomains: the names of a proxy or ingress in front of it.
	// Requests for any other name are refused with 403, so that a page of
	// another site cannot read the dashboard by pointing its own name at
	// the listener's address (DNS rebinding).
	AllowedHosts []string
	// PollInterval is how often a stream client's history readers look for
	// new events and transactions; 0 means 200ms.
	PollInterval time.Duration
	// AllowResync enables the dashboard's one write action: a button that
	// requests a resync of Loop (POST /ui/api/resync, as POST
	// /controller/resync), refused to pages of other sites. Off by
	// default: the dashboard is read-only.
	AllowResync bool
	// MaxStreamClients caps the live streams (open pages) served at once;
	// 0 means DefaultMaxStreamClients. Each costs a reader that polls the
	// histories and a buffer of StreamBuffer messages, so a script or a
	// forgotten wall of tabs must not multiply them without bound: a page
	// over the cap gets 503 and a message saying so (and retries).
	MaxStreamClients int
}

// DefaultMaxStreamClients is Options.MaxStreamClients' default: far more
// pages than the people who watch one operator open, few enough that their
// readers and buffers stay a small cost.
const DefaultMaxStreamClients = 32

// Dashboard serves the dashboard; it is an http.Handler for the paths below
// Path (mount it with Mount).
type Dashboard struct {
	opts   Options
	static http.Handler
	mux    *http.ServeMux
	// run names this Dashboard (Info.Run, the stream's hello): event and
	// transaction numbers are only comparable within one run, and a
	// restarted operator (a new loop and scheduler, numbering from 0) is
	// served by a new Dashboard.
	run string
	// dropped counts stream messages dropped for slow clients.
	dropped atomic.Uint64
	clients atomic.Int64
	// hasScheduler is false when the operator runs no KV scheduler: the
	// graph and time travel are left out.
	hasScheduler bool
	// resync and cop serve the resync request, with AllowResync.
	resync Resyncer
	cop    *http.CrossOriginProtection
}

// New returns the dashboard of the sources in opts.
func New(opts Options) (*Dashboard, error) {
	hasScheduler := opts.Scheduler != nil
	if !hasScheduler {
		opts.Scheduler = noScheduler{}
	}
	if opts.StreamBuffer <= 0 {
		opts.StreamBuffer = 256
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 200 * time.Millisecond
	}
	if opts.MaxStreamClients <= 0 {
		opts.MaxStreamClients = DefaultMaxStreamClients
	}
	if opts.Title == "" {
		opts.Title = "Lariat operator"
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	d := &Dashboard{opts: opts, hasScheduler: hasScheduler, run: rand.Text(), static: http.StripPrefix(strings.TrimSuffix(Path, "/"), http.FileServerFS(sub))}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path+"api/graph", d.serveGraph)
	mux.HandleFunc("GET "+Path+"api/value", d.serveValue)
	mux.HandleFunc("GET "+Path+"api/txns", d.serveTxns)
	mux.HandleFunc("GET "+Path+"api/events", d.serveEvents)
	mux.HandleFunc("GET "+Path+"api/controllers", d.serveControllers)
	mux.HandleFunc("GET "+Path+"api/replicas", d.serveReplicas)
	mux.HandleFunc("GET "+Path+"api/info", d.serveInfo)
	mux.HandleFunc("GET "+Path+"api/stream", d.serveStream)
	mux.Handle("GET "+Path, noListing(d.static))
	if err := d.enableResync(mux); err != nil {
		return nil, err
	}
	d.mux = mux
	return d, nil
}

// Mount serves the dashboard on mux at Path.
func (d *Dashboard) Mount(mux *http.ServeMux) { mux.Handle(Path, d) }

// ServeHTTP serves the dashboard's page, assets and read-only API. Every
// method but GET and HEAD is refused: the dashboard writes nothing, but
// for the resync request of Options.AllowResync.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !hostAllowed(r.Host, d.opts.AllowedHosts) {
		refuseHost(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !d.writable(r) {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the dashboard is read-only (but for a resync request, with Options.AllowResync)", http.StatusMethodNotAllowed)
		return
	}
	// The page loads nothing from elsewhere; the policy makes sure of it.
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	// No other site may frame the page (clickjacking).
	w.Header().Set("X-Frame-Options", "DENY")
	d.mux.ServeHTTP(w, r)
}

// noListing answers 404 for a directory below Path (e.g. /ui/vendor/)
// instead of listing its files; Path itself serves index.html.
func noListing(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") && r.URL.Path != Path {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}
