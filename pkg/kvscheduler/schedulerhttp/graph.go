package schedulerhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// stateColor fills the nodes by state, so that problems stand out.
func stateColor(s kvscheduler.ValueState) string {
	switch s {
	case kvscheduler.Configured:
		return "palegreen"
	case kvscheduler.Obtained, kvscheduler.Discovered:
		return "lightblue"
	case kvscheduler.Pending, kvscheduler.Missing:
		return "khaki"
	case kvscheduler.Invalid, kvscheduler.Failed, kvscheduler.Retrying:
		return "salmon"
	default:
		return "lightgray"
	}
}

// dotQuote quotes s as a DOT string; keys are arbitrary text.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", "")
	return `"` + r.Replace(s) + `"`
}

// renderDOT draws every value as a node labeled with its key and state,
// and edges from each value to what it needs: a solid edge to each key
// satisfying a met dependency, a dashed red one to the key (or, for an
// any-of dependency nothing matches, the dependency's name) an unmet
// dependency waits for, and a dotted one from a derived value to its base.
// highlight marks the keys changed by a transaction with a thick gold
// border. sts are the current statuses or those of a past snapshot, so
// that both are drawn alike.
func renderDOT(sts []kvscheduler.ValueStatus, highlight map[string]bool, title string) []byte {
	g := dotGraph{known: make(map[string]bool, len(sts)), highlight: highlight}
	for _, st := range sts {
		g.known[st.Key] = true
	}
	g.b.WriteString("digraph kvscheduler {\n")
	fmt.Fprintf(&g.b, "  label=%s;\n  labelloc=t;\n  rankdir=LR;\n", dotQuote(title))
	g.b.WriteString("  node [shape=box, style=\"rounded,filled\", fontname=\"monospace\"];\n")
	for _, st := range sts {
		g.node(st)
	}
	for _, st := range sts {
		g.edges(st)
	}
	// Dependencies nothing knows of get a node of their own, so that the
	// edge shows what is missing.
	sort.Strings(g.missing)
	for _, k := range g.missing {
		attrs := fmt.Sprintf("label=%s, style=dashed", dotQuote(k+"\n"+kvscheduler.NonExistent.String()))
		if highlight[k] {
			attrs += `, color=gold, penwidth=4`
		}
		fmt.Fprintf(&g.b, "  %s [%s];\n", dotQuote(k), attrs)
	}
	g.b.WriteString("}\n")
	return g.b.Bytes()
}

// dotGraph is a DOT document being written: the keys that have a node,
// and those edges pointed at that had none (drawn last, as missing).
type dotGraph struct {
	b         bytes.Buffer
	known     map[string]bool
	missing   []string
	highlight map[string]bool
}

// need notes that an edge points at k, so that k gets a node.
func (g *dotGraph) need(k string) {
	if !g.known[k] {
		g.known[k] = true
		g.missing = append(g.missing, k)
	}
}

// node writes st's node: its key, state and descriptor, an ellipse for a
// derived value, gold when highlighted.
func (g *dotGraph) node(st kvscheduler.ValueStatus) {
	label := st.Key + "\n" + st.State.String()
	if st.Descriptor != "" {
		label += "\n[" + st.Descriptor + "]"
	}
	attrs := fmt.Sprintf("label=%s, fillcolor=%s", dotQuote(label), stateColor(st.State))
	if st.Derived {
		attrs += `, shape=ellipse`
	}
	if g.highlight[st.Key] {
		attrs += `, color=gold, penwidth=4`
	}
	fmt.Fprintf(&g.b, "  %s [%s];\n", dotQuote(st.Key), attrs)
}

// edges writes st's dependencies and its base.
func (g *dotGraph) edges(st kvscheduler.ValueStatus) {
	from := dotQuote(st.Key)
	drawn := make(map[string]bool, len(st.Dependencies)+1)
	for _, dep := range st.Dependencies {
		drawn[dep.Label] = true
		g.dependency(from, dep)
	}
	if st.BaseKey != "" {
		drawn[st.BaseKey] = true
		g.need(st.BaseKey)
		fmt.Fprintf(&g.b, "  %s -> %s [style=dotted, label=\"derived from\"];\n", from, dotQuote(st.BaseKey))
	}
	// Unmet dependencies not described above (statuses published
	// without their dependency list) are still drawn.
	for _, dep := range st.UnmetDependencies {
		if drawn[dep] {
			continue
		}
		g.need(dep)
		fmt.Fprintf(&g.b, "  %s -> %s [style=dashed, color=red, label=\"unmet\"];\n", from, dotQuote(dep))
	}
}

// dependency writes the edges of one dependency: to each key that meets
// it, or dashed and red to what it waits for.
func (g *dotGraph) dependency(from string, dep kvscheduler.DependencyStatus) {
	// A dependency on one key is named by the key unless it has a label;
	// repeating the key on the edge would only add clutter.
	label := ""
	if dep.Label != dep.Key {
		label = dep.Label
	}
	// An ordering-only dependency has a hollow arrowhead and says so when
	// unmet: its dependent stays when it goes.
	ordering := dep.Kind == kvscheduler.OrderingOnly
	if dep.Met {
		var a []string
		if label != "" {
			a = append(a, "label="+dotQuote(label))
		}
		if ordering {
			a = append(a, "arrowhead=empty")
		}
		attrs := ""
		if len(a) > 0 {
			attrs = " [" + strings.Join(a, ", ") + "]"
		}
		for _, k := range dep.Keys {
			g.need(k)
			fmt.Fprintf(&g.b, "  %s -> %s%s;\n", from, dotQuote(k), attrs)
		}
		return
	}
	targets := dep.Keys
	if len(targets) == 0 {
		targets = []string{dep.Label}
	}
	unmet, head := "unmet ", ""
	if ordering {
		unmet, head = "unmet ordering-only ", ", arrowhead=empty"
	}
	for _, k := range targets {
		g.need(k)
		fmt.Fprintf(&g.b, "  %s -> %s [style=dashed, color=red, label=%s%s];\n", from, dotQuote(k),
			dotQuote(strings.TrimSpace(unmet+label)), head)
	}
}

func (h *handler) graph(w http.ResponseWriter, r *http.Request) error {
	format, err := oneOf(r, "format", "svg", "dot")
	if err != nil {
		return err
	}
	title := "KV scheduler: current values"
	var sts []kvscheduler.ValueStatus
	var snapErr error
	if t, ok, err := timeParam(r, "time"); err != nil {
		return err
	} else if ok {
		snap, err := h.s.GraphSnapshot(t)
		if err != nil {
			// Checked after txn below, so that a bad txn still answers 400.
			snapErr = snapshotError(err)
		}
		sts = snap.Values
		title = fmt.Sprintf("KV scheduler: values after transaction #%d (%s)", snap.SeqNum, snap.Time.UTC().Format(time.RFC3339))
	} else {
		sts = h.s.ValueStatuses(nil)
	}
	var highlight map[string]bool
	if seq, ok, err := uintParam(r, "txn"); err != nil {
		return err
	} else if ok {
		rec, found := h.s.GetRecordedTransaction(seq)
		if !found {
			return notFound{fmt.Errorf("transaction #%d is not recorded", seq)}
		}
		highlight = map[string]bool{}
		for _, op := range rec.Executed {
			// A value left waiting (NOOP) did not change in the southbound.
			highlight[op.Key] = highlight[op.Key] || !op.NOOP
		}
		title += fmt.Sprintf(", changed by transaction #%d highlighted", seq)
	}
	if snapErr != nil {
		return snapErr
	}
	dot := renderDOT(sts, highlight, title)
	if format == "dot" {
		w.Header().Set("Content-Type", "text/vnd.graphviz; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(dot)
		return nil
	}
	path, err := h.lookPath("dot")
	if err != nil {
		writeError(w, http.StatusNotImplemented, fmt.Errorf(
			"SVG rendering needs Graphviz dot, which is not on PATH (%v); install graphviz or use format=dot", err))
		return nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.renderTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "-Tsvg")
	cmd.Stdin = bytes.NewReader(dot)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	svg, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return errors.New("rendering the graph with dot failed: " + err.Error())
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(svg)
	return nil
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
