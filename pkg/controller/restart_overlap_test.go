package controller_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// passLog records every handler call of a key: when it began and ended,
// and which run it belonged to.
type passLog struct {
	mu     sync.Mutex
	passes map[string][]pass
}

type pass struct {
	run        int
	began, end time.Time
}

func (l *passLog) begin(key string, run int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.passes == nil {
		l.passes = map[string][]pass{}
	}
	l.passes[key] = append(l.passes[key], pass{run: run, began: time.Now()})
	return len(l.passes[key]) - 1
}

func (l *passLog) finish(key string, i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.passes[key][i].end = time.Now()
}

func (l *passLog) of(key string) []pass {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]pass(nil), l.passes[key]...)
}

// TestRestartedFactoryNeverRunsAKeyTwiceAtOnce: a factory started again
// after its context ended (leader.Run on winning the lease back) must not
// start a key's handler while the last run's handler for that key is still
// running. The first run's handler for "held" is kept busy, past its run's
// end, until the second run has handled another key; the second run's
// handler for "held" must begin after the first one ended.
func TestRestartedFactoryNeverRunsAKeyTwiceAtOnce(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns, setup{})
	c := configMapController(t, f)
	var log passLog
	var runMu sync.Mutex
	run := 1
	heldBegan := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	c.RegisterHandler(t.Context(), "slow", controller.SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		runMu.Lock()
		r := run
		runMu.Unlock()
		i := log.begin(key, r)
		defer log.finish(key, i)
		if key == ns+"/held" && r == 1 {
			once.Do(func() { close(heldBegan) })
			<-release
		}
		return nil, nil
	}))
	createCM(t, cp.Config(), ns, "held", nil)
	first, cancel := context.WithCancel(t.Context())
	if err := f.Start(first, 2); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, heldBegan, "the first run's handler begins on held")
	cancel()
	controlplanetest.Eventually(t, 30*time.Second, "the first run's informer stopped", c.Informer().IsStopped)

	runMu.Lock()
	run = 2
	runMu.Unlock()
	start(t, f, 2)
	createCM(t, cp.Config(), ns, "other", nil)
	controlplanetest.Eventually(t, 30*time.Second, "the second run handling another key", func() bool {
		for _, p := range log.of(ns + "/other") {
			if p.run == 2 && !p.end.IsZero() {
				return true
			}
		}
		return false
	})
	close(release)
	controlplanetest.Eventually(t, 30*time.Second, "both runs' handlers of the held key returned", func() bool {
		ended := map[int]bool{}
		for _, p := range log.of(ns + "/held") {
			ended[p.run] = !p.end.IsZero()
		}
		return ended[1] && ended[2]
	})
	var old pass
	for _, p := range log.of(ns + "/held") {
		if p.run == 1 {
			old = p
		}
	}
	for _, p := range log.of(ns + "/held") {
		if p.run == 2 && p.began.Before(old.end) {
			t.Errorf("the second run's handler for the held key began at %v, before the first run's ended at %v (%v earlier)",
				p.began.Format(time.StampMicro), old.end.Format(time.StampMicro), old.end.Sub(p.began))
		}
	}
}
