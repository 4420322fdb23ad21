package dashboard

import (
	"net/http"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// Controller is one kind's line in the controllers view, read from the
// operator's metrics.
type Controller struct {
	Kind       string  `json:"kind"`
	QueueDepth float64 `json:"queueDepth"`
	Adds       float64 `json:"adds"`
	Retries    float64 `json:"retries"`
	// WaitMean and HandleMean are the mean seconds a key waited in the
	// queue and a handler call took.
	WaitMean   float64 `json:"waitMean"`
	HandleMean float64 `json:"handleMean"`
	// Wait and Handle are their percentiles since the operator started,
	// estimated from the metrics' histograms (all handlers of the kind
	// together): a mean hides the slow few a user looks for.
	Wait    Percentiles `json:"wait"`
	Handle  Percentiles `json:"handle"`
	Handled uint64      `json:"handled"`
	Errors  float64     `json:"errors"`
	Panics  float64     `json:"panics"`
	Fights  float64     `json:"fights"`
	Cached  float64     `json:"cached"`
}

// Loop is the event loop's line in the controllers view.
type Loop struct {
	State          string `json:"state"`
	Error          string `json:"error,omitempty"`
	Processed      uint64 `json:"processed"`
	QueueLength    int    `json:"queueLength"`
	HealingDue     string `json:"healingDue,omitempty"`
	FailedHealings int    `json:"failedHealings"`
}

// Controllers is the answer of GET /ui/api/controllers.
type Controllers struct {
	Loop  *Loop        `json:"loop,omitempty"`
	Kinds []Controller `json:"kinds"`
	// Error says why the metrics could not be read.
	Error string `json:"error,omitempty"`
}

func (d *Dashboard) serveControllers(w http.ResponseWriter, _ *http.Request) {
	out := Controllers{Kinds: []Controller{}}
	if l := d.opts.Loop; l != nil {
		st := l.Status()
		out.Loop = &Loop{State: st.State.String(), Processed: st.Processed, QueueLength: st.QueueLength, FailedHealings: st.FailedHealings}
		if st.Err != nil {
			out.Loop.Error = st.Err.Error()
		}
		if !st.HealingDue.IsZero() {
			out.Loop.HealingDue = st.HealingDue.Format("15:04:05")
		}
	}
	if d.opts.Metrics != nil {
		mfs, err := d.opts.Metrics.Gather()
		if err != nil {
			out.Error = err.Error()
		}
		out.Kinds = controllers(mfs)
	}
	writeJSON(w, out)
}

// controllers folds the controller metrics into one line per kind.
func controllers(mfs []*dto.MetricFamily) []Controller {
	byKind := map[string]*Controller{}
	line := func(m *dto.Metric) *Controller {
		kind := label(m, "gvk")
		c := byKind[kind]
		if c == nil {
			c = &Controller{Kind: kind}
			byKind[kind] = c
		}
		return c
	}
	var waitSum, handleSum = map[string]float64{}, map[string]float64{}
	var waitCount = map[string]uint64{}
	waitHist, handleHist := map[string]*histogram{}, map[string]*histogram{}
	hist := func(m map[string]*histogram, kind string) *histogram {
		if m[kind] == nil {
			m[kind] = &histogram{}
		}
		return m[kind]
	}
	for _, mf := range mfs {
		name := mf.GetName()
		if !strings.HasPrefix(name, "lariat_queue_") && !strings.HasPrefix(name, "lariat_handler") && name != "lariat_cache_objects" {
			continue
		}
		for _, m := range mf.GetMetric() {
			c := line(m)
			switch name {
			case "lariat_queue_depth":
				c.QueueDepth += m.GetGauge().GetValue()
			case "lariat_queue_adds_total":
				c.Adds += m.GetCounter().GetValue()
			case "lariat_queue_retries_total":
				c.Retries += m.GetCounter().GetValue()
			case "lariat_queue_wait_seconds":
				waitSum[c.Kind] += m.GetHistogram().GetSampleSum()
				waitCount[c.Kind] += m.GetHistogram().GetSampleCount()
				hist(waitHist, c.Kind).add(m.GetHistogram())
			case "lariat_handler_duration_seconds":
				handleSum[c.Kind] += m.GetHistogram().GetSampleSum()
				c.Handled += m.GetHistogram().GetSampleCount()
				hist(handleHist, c.Kind).add(m.GetHistogram())
			case "lariat_handler_errors_total":
				c.Errors += m.GetCounter().GetValue()
			case "lariat_handler_panics_total":
				c.Panics += m.GetCounter().GetValue()
			case "lariat_handler_fights_total":
				c.Fights += m.GetCounter().GetValue()
			case "lariat_cache_objects":
				c.Cached += m.GetGauge().GetValue()
			}
		}
	}
	out := make([]Controller, 0, len(byKind))
	for kind, c := range byKind {
		if n := waitCount[kind]; n > 0 {
			c.WaitMean = waitSum[kind] / float64(n)
		}
		if c.Handled > 0 {
			c.HandleMean = handleSum[kind] / float64(c.Handled)
		}
		if h := waitHist[kind]; h != nil {
			c.Wait = h.percentiles()
		}
		if h := handleHist[kind]; h != nil {
			c.Handle = h.percentiles()
		}
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b Controller) int { return strings.Compare(a.Kind, b.Kind) })
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Info is the answer of GET /ui/api/info: what the page needs to know
// before it draws anything.
type Info struct {
	Title string `json:"title"`
	// Run names this Dashboard (made by New): a page that finds another
	// run on the stream's hello follows a new operator whose numbers
	// have nothing to do with those it has.
	Run          string `json:"run"`
	HasScheduler bool   `json:"hasScheduler"`
	HasLoop      bool   `json:"hasLoop"`
	HasMetrics   bool   `json:"hasMetrics"`
	HasReplicas  bool   `json:"hasReplicas"`
	// Streams is the number of live streams (open pages) served now, and
	// MaxStreams the cap above which a page is refused (a page whose
	// stream failed reads them to say why).
	Streams    int `json:"streams"`
	MaxStreams int `json:"maxStreams"`
	// Resync tells whether the page may request a resync
	// (Options.AllowResync).
	Resync bool `json:"resync,omitempty"`
}

func (d *Dashboard) serveInfo(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, Info{Title: d.opts.Title, Run: d.run, HasScheduler: d.hasScheduler, HasLoop: d.opts.Loop != nil, HasMetrics: d.opts.Metrics != nil, HasReplicas: d.opts.Replicas != nil || d.opts.Shard != nil,
		Streams: d.Clients(), MaxStreams: d.opts.MaxStreamClients, Resync: d.resync != nil})
}
