package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// TestMain lets the test binary act as the child process the comparison
// starts for each framework (it re-executes os.Args[0]).
func TestMain(m *testing.M) {
	if child, phase := flagValue("-child"), flagValue("-phase"); child != "" {
		cfg := config{child: child, phase: phase, kubeconfig: flagValue("-kubeconfig"), namespace: flagValue("-namespace"), workload: flagValue("-workload"),
			objects: atoi(flagValue("-objects")), updates: atoi(flagValue("-updates")), keys: atoi(flagValue("-keys")), workers: atoi(flagValue("-workers"))}
		if err := runChild(context.Background(), cfg); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSmallComparison runs every framework through every phase at a small
// scale, so the harness behind `make bench` cannot rot unnoticed.
func TestSmallComparison(t *testing.T) {
	cfg := config{objects: 50, updates: 20, keys: 2000, workers: 2, rounds: 1, namespace: "bench", frameworks: frameworkNames, workload: "configmaps"}
	results, err := compare(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	printTable(&table, cfg, results)
	t.Log("\n" + table.String())
	for _, name := range frameworkNames {
		r := results[name]
		if r == nil || r.ColdStart <= 0 || r.HeapBytes == 0 || r.PeakHeapBytes == 0 || r.PeakRSSBytes == 0 || r.Steady <= 0 || r.Dispatch <= 0 {
			t.Errorf("%s: incomplete result %+v", name, r)
		}
	}
	if !strings.Contains(table.String(), "| lariat / best peer |") {
		t.Errorf("table header missing:\n%s", table.String())
	}
	if !strings.Contains(table.String(), "| client CPU during dispatch |") {
		t.Errorf("dispatch CPU row missing:\n%s", table.String())
	}
}

// TestSmallPodComparison runs the realistic workload at a small scale (200
// objects, so that lariat-metadata reads whole objects through GetFull:
// a read that failed would leave its object unhandled and fail the run,
// and so do controller-runtime-metadata's GETs): every framework lists
// Pods written by three field managers, and the table has the memory rows
// the workload is for, lariat-metadata's ratio to its fair peer, and no
// dispatch rows.
func TestSmallPodComparison(t *testing.T) {
	frameworks := []string{"lariat", "lariat-compact", "lariat-metadata", "lasso", "controller-runtime", "controller-runtime-strip", "controller-runtime-metadata", "wrangler-on-lariat"}
	cfg := config{objects: 200, updates: 100, workers: 2, rounds: 1, namespace: "bench", frameworks: frameworks, workload: "pods"}
	results, err := compare(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	printTable(&table, cfg, results)
	t.Log("\n" + table.String())
	for _, name := range frameworks {
		r := results[name]
		if r == nil || r.ColdStart <= 0 || r.HeapBytes == 0 || r.PeakHeapBytes == 0 || r.PeakRSSBytes == 0 || r.Steady <= 0 {
			t.Errorf("%s: incomplete result %+v", name, r)
		}
	}
	for _, want := range []string{"| cold start, 200 pods |", "| heap after sync (after GC) |", "| lariat-metadata / best peer | lariat-metadata / controller-runtime-metadata |", "| peak heap during cold start |", "| peak RSS during cold start |"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("row %q missing:\n%s", want, table.String())
		}
	}
	if strings.Contains(table.String(), "dispatch") {
		t.Errorf("the pods workload has no dispatch phase, but the table shows one:\n%s", table.String())
	}
}

func flagValue(name string) string {
	for i, a := range os.Args {
		if a == name && i+1 < len(os.Args) {
			return os.Args[i+1]
		}
	}
	return ""
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// TestSmallCRComparison runs the custom-resource workload at a small scale:
// the CRD is installed, every framework lists the typed custom resources,
// and the table has the memory rows.
func TestSmallCRComparison(t *testing.T) {
	frameworks := []string{"lariat", "lariat-compact", "lasso", "controller-runtime", "controller-runtime-strip"}
	cfg := config{objects: 20, updates: 10, workers: 2, rounds: 1, namespace: "bench", frameworks: frameworks, workload: "crs"}
	results, err := compare(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	printTable(&table, cfg, results)
	t.Log("\n" + table.String())
	for _, name := range frameworks {
		r := results[name]
		if r == nil || r.ColdStart <= 0 || r.HeapBytes == 0 || r.PeakHeapBytes == 0 || r.PeakRSSBytes == 0 || r.Steady <= 0 {
			t.Errorf("%s: incomplete result %+v", name, r)
		}
	}
	for _, want := range []string{"| cold start, 20 crs |", "| heap after sync (after GC) |", "| peak heap during cold start |"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("row %q missing:\n%s", want, table.String())
		}
	}
}
