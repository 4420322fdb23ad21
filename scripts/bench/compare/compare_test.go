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
		cfg := config{child: child, phase: phase, kubeconfig: flagValue("-kubeconfig"), namespace: flagValue("-namespace"),
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
	cfg := config{objects: 50, updates: 20, keys: 2000, workers: 2, rounds: 1, namespace: "bench", frameworks: frameworkNames}
	results, err := compare(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	printTable(&table, cfg, results)
	t.Log("\n" + table.String())
	for _, name := range frameworkNames {
		r := results[name]
		if r == nil || r.ColdStart <= 0 || r.HeapBytes == 0 || r.Steady <= 0 || r.Dispatch <= 0 {
			t.Errorf("%s: incomplete result %+v", name, r)
		}
	}
	if !strings.Contains(table.String(), "| lariat / best peer |") {
		t.Errorf("table header missing:\n%s", table.String())
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
