package controller

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	kruntime "k8s.io/apimachinery/pkg/runtime"
)

// TestAdv3AGateThatPanicsDoesNotKillTheProcess: a handler that panics is
// recovered, and its panic becomes the handler's error (docs/core.md); a
// Gate runs in the same pass, named "gate" in the pass's record and in
// Wait's report as a handler is (h30a, issue 30's attack on the pass
// records). A Gate that panics on its first call must end that pass with
// an error as a handler's panic does, and be asked again on the retry,
// rather than kill the process from the worker's goroutine. The pass runs
// in a child process (the test binary again), since a panic that escapes
// a worker ends the whole binary.
func TestAdv3AGateThatPanicsDoesNotKillTheProcess(t *testing.T) {
	if os.Getenv("LARIAT_ADV3_GATE_CHILD") == "1" {
		adv3GateChild(t)
		return
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestAdv3AGateThatPanicsDoesNotKillTheProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "LARIAT_ADV3_GATE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		first := string(out)
		if i := strings.Index(first, "panic:"); i >= 0 {
			first, _, _ = strings.Cut(first[i:], "\n")
		}
		t.Fatalf("a Gate that panicked killed the process (%v): %s", err, first)
	}
}

// adv3GateChild runs a controller whose Gate panics on its first call and
// waits for the Gate's second call (the key's retry).
func adv3GateChild(t *testing.T) {
	var calls atomic.Int32
	again := make(chan struct{})
	gate := GateFunc(func(context.Context, string, kruntime.Object) (bool, error) {
		switch calls.Add(1) {
		case 1:
			panic("the gate's first call panics")
		case 2:
			close(again)
		}
		return true, nil
	})
	c := adv3ControllerOf(t, []string{"k"}, &Options{Gate: gate}, func(string) {})
	if err := c.Start(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-again:
	case <-time.After(30 * time.Second):
		t.Fatal("the Gate was not asked again after its panic")
	}
}
