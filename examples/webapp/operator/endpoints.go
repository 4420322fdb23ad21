package operator

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/schedulerhttp"
)

// buildMux puts the dashboard, the loop's and the scheduler's endpoints,
// metrics, health and the index on one mux, which Handler protects.
func (o *Operator) buildMux() error {
	dash, err := dashboard.New(dashboard.Options{
		Title: "WebApp operator", Scheduler: o.sched, Loop: o.loop, Metrics: o.registry,
		Replicas: o.opts.Replicas, RedactKinds: o.opts.RedactKinds, AllowedHosts: o.opts.AllowedHosts,
		AllowResync: o.opts.AllowResync,
		// A WebApp's values are grouped by the WebApp.
		OwnerOf: func(key string) string {
			if ns, name, ok := appOfKey(key); ok {
				return appKey(ns, name)
			}
			return ""
		},
	})
	if err != nil {
		return err
	}
	o.mux = http.NewServeMux()
	dash.Mount(o.mux)
	o.mux.Handle("/controller/", o.loop.HTTPHandler())
	o.mux.Handle("/scheduler/", schedulerhttp.New(o.sched))
	o.mux.Handle("/metrics", promhttp.HandlerFor(o.registry, promhttp.HandlerOpts{}))
	o.mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if err := o.loop.Health(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	o.mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, Endpoints)
	})
	return nil
}

// Endpoints describes what Handler serves, one "path  description" per
// line; the index (/) shows it.
const Endpoints = `/ui/                         the live dashboard: the value graph, events, controllers, replicas (read-only)
/controller/event-history    every event the loop processed, with each handler's part and the transaction
/scheduler/status            every object's state; PENDING ones say what they wait for
/scheduler/txn-history       the scheduler's transactions (format=text for the logs)
/scheduler/graph?format=dot  the dependency graph (SVG without format=dot, if Graphviz is installed)
/metrics                     Prometheus metrics of the controllers, the event loop and the scheduler
/healthz                     the event loop's health
`

// Handler serves the dashboard (/ui/), the event history (/controller/), the scheduler
// (/scheduler/), Prometheus metrics (/metrics), health (/healthz) and an
// index (/). Requests for a host name other than an IP address, localhost
// or Options.AllowedHosts are refused (DNS rebinding), and so are the
// resync requests of other sites (the Lariat APIs check Origin).
func (o *Operator) Handler() http.Handler { return dashboard.Protect(o.mux, o.opts.AllowedHosts) }
