package main

import (
	"fmt"
	"io"
	"strings"
)

// tableRow is one measure of the table: how to read it from a result and
// how to print it.
type tableRow struct {
	name  string
	value func(*result) float64
	unit  func(float64) string
}

// ratioColumn is one ratio column after the frameworks' own: its header and
// the cell it gives a row, whose best-peer value is best.
type ratioColumn struct {
	header string
	cell   func(r tableRow, best float64) string
}

// printTable writes a Markdown table: one column per framework, then
// Lariat's ratio to the best of the peers in any of their configurations
// (controller-runtime-strip counts as a peer): lower is better for every row.
func printTable(w io.Writer, cfg config, results map[string]*result) {
	columns := ratioColumns(results)
	headers := make([]string, len(columns))
	for i, c := range columns {
		headers[i] = c.header
	}
	fmt.Fprintf(w, "| workload | %s | %s |\n", strings.Join(cfg.frameworks, " | "), strings.Join(headers, " | "))
	fmt.Fprintf(w, "|---|%s\n", strings.Repeat("---|", len(cfg.frameworks)+len(columns)))
	for _, r := range tableRows(cfg) {
		if !measured(cfg, results, r.value) {
			continue // a phase this workload does not run
		}
		cells := make([]string, 0, len(cfg.frameworks)+len(columns))
		best := 0.0
		for _, name := range cfg.frameworks {
			v := r.value(results[name])
			cells = append(cells, r.unit(v))
			if isPeer(name) && v > 0 && (best == 0 || v < best) {
				best = v
			}
		}
		for _, c := range columns {
			cells = append(cells, c.cell(r, best))
		}
		fmt.Fprintf(w, "| %s | %s |\n", r.name, strings.Join(cells, " | "))
	}
}

// tableRows lists the measures in the order the table prints them.
func tableRows(cfg config) []tableRow {
	seconds := func(v float64) string { return fmt.Sprintf("%.2f s", v) }
	// Some rows are not measured for every framework.
	secondsOrNA := func(v float64) string {
		if v <= 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.3f s", v)
	}
	mib := func(v float64) string { return fmt.Sprintf("%.1f MiB", v/(1<<20)) }
	return []tableRow{
		{fmt.Sprintf("cold start, %d %s", cfg.objects, cfg.workload), func(r *result) float64 { return r.ColdStart }, seconds},
		{"cold start: first handler call", func(r *result) float64 { return r.FirstHandled }, secondsOrNA},
		{"cold start: caches synced (Lariat's Start returned)", func(r *result) float64 { return r.Synced }, secondsOrNA},
		{"client CPU during cold start", func(r *result) float64 { return r.ColdStartCPU }, secondsOrNA},
		{"heap after sync (after GC)", func(r *result) float64 { return float64(r.HeapBytes) }, mib},
		{"peak heap during cold start", func(r *result) float64 { return float64(r.PeakHeapBytes) }, mib},
		{"peak RSS during cold start", func(r *result) float64 { return float64(r.PeakRSSBytes) }, mib},
		{fmt.Sprintf("steady state, %d updates", cfg.updates), func(r *result) float64 { return r.Steady }, seconds},
		{fmt.Sprintf("dispatch, %d keys", cfg.keys), func(r *result) float64 { return r.Dispatch }, seconds},
		{"client CPU during dispatch", func(r *result) float64 { return r.DispatchCPU }, secondsOrNA},
		{"dispatch allocations", func(r *result) float64 { return float64(r.DispatchAlloc) }, func(v float64) string { return fmt.Sprintf("%.0f MiB", v/(1<<20)) }},
	}
}

// ratioColumns lists the ratio columns the run's frameworks call for:
// Lariat to the best peer always; each of Lariat's memory configurations in
// the run (lariat-compact, the cache that stores objects encoded;
// lariat-metadata, the metadata-only cache) to the best peer, and to its
// fair peer (the same controller on the peer's equivalent cache) when that
// is in the run too; and, with wrangler-on-lariat in the run, its ratio to
// lariat: the lasso adapter's overhead.
func ratioColumns(results map[string]*result) []ratioColumn {
	toBest := func(name string) ratioColumn {
		header := name + " / best peer"
		return ratioColumn{header, func(r tableRow, best float64) string { return ratioTo(r.value, results[name], best) }}
	}
	columns := []ratioColumn{toBest("lariat")}
	var variants []string
	for _, name := range []string{"lariat-compact", "lariat-metadata"} {
		if results[name] != nil {
			variants = append(variants, name)
			columns = append(columns, toBest(name))
		}
	}
	for _, name := range variants {
		if peer := fairPeer(name); peer != "" && results[peer] != nil {
			columns = append(columns, ratioColumn{name + " / " + peer, func(r tableRow, _ float64) string {
				return ratioTo(r.value, results[name], r.value(results[peer]))
			}})
		}
	}
	if results["wrangler-on-lariat"] != nil && results["lariat"] != nil {
		columns = append(columns, ratioColumn{"wrangler-on-lariat / lariat", func(r tableRow, _ float64) string {
			return ratioTo(r.value, results["wrangler-on-lariat"], r.value(results["lariat"]))
		}})
	}
	return columns
}

// ratioTo formats a framework's value divided by best, "n/a" when either
// is missing.
func ratioTo(value func(*result) float64, r *result, best float64) string {
	if r == nil || best <= 0 || value(r) <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", value(r)/best)
}

// measured tells whether any framework has a value for the row.
func measured(cfg config, results map[string]*result, value func(*result) float64) bool {
	for _, name := range cfg.frameworks {
		if results[name] != nil && value(results[name]) > 0 {
			return true
		}
	}
	return false
}

// isPeer tells the other frameworks from Lariat's own variants, which
// include wrangler-on-lariat (wrangler's controllers on Lariat's core).
// A fair peer of one variant is not a peer of the others: a metadata-only
// cache is a different controller from one handed whole objects.
func isPeer(name string) bool {
	return !strings.HasPrefix(name, "lariat") && name != "wrangler-on-lariat" && !isFairPeer(name)
}

// isFairPeer tells whether name is some Lariat variant's fair peer.
func isFairPeer(name string) bool {
	return name == fairPeer("lariat-metadata")
}

// fairPeer names, for a Lariat variant that changes what handlers are
// given, the peer configuration that gives the same ("" for none).
func fairPeer(variant string) string {
	if variant == "lariat-metadata" {
		return "controller-runtime-metadata"
	}
	return ""
}
