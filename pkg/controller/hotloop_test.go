package controller

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientworkqueue "k8s.io/client-go/util/workqueue"
)

// loopDriver feeds hotLoops passes of one key with made-up resourceVersions.
type loopDriver struct {
	t    *testing.T
	h    *hotLoops
	hook *logtest.Hook
	rv   int
	now  time.Time
}

func newLoopDriver(t *testing.T, limit int) *loopDriver {
	log, hook := logtest.NewNullLogger()
	limiter := clientworkqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second)
	return &loopDriver{t: t, h: newHotLoops(limit, limiter, log, nil, "v1/ConfigMap"), hook: hook, rv: 1, now: time.Unix(0, 0)}
}

// ownWrite is a pass begun from the version the last pass wrote, in which
// each of handlers writes once; it returns the hold.
func (d *loopDriver) ownWrite(handlers ...string) time.Duration {
	return d.pass(fmt.Sprint(d.rv), handlers, nil)
}

// otherWrite is a pass begun from a version someone else wrote.
func (d *loopDriver) otherWrite(handlers ...string) time.Duration {
	d.rv++
	return d.pass(fmt.Sprint(d.rv), handlers, nil)
}

func (d *loopDriver) pass(from string, handlers []string, err error) time.Duration {
	p := pass{resourceVersion: from, err: err}
	for _, h := range handlers {
		d.rv++
		p.writes = append(p.writes, write{handler: h, resourceVersion: fmt.Sprint(d.rv)})
	}
	d.now = d.now.Add(time.Millisecond)
	return d.h.passed("ns/x", p, d.now)
}

func (d *loopDriver) logged(level logrus.Level) []string {
	var out []string
	for _, e := range d.hook.AllEntries() {
		if e.Level == level {
			out = append(out, e.Message)
		}
	}
	return out
}

func TestHotLoopNeedsALimitOfOwnWritesInARow(t *testing.T) {
	d := newLoopDriver(t, 4)
	for i := range 3 {
		if hold := d.ownWrite("a"); hold != 0 {
			t.Fatalf("pass %d held %s before the limit", i+1, hold)
		}
	}
	// A failed pass that wrote nothing (a conflict) neither ends nor
	// continues the chain.
	if hold := d.pass(fmt.Sprint(d.rv), nil, errors.New("conflict")); hold != 0 {
		t.Fatalf("failed pass held %s", hold)
	}
	hold := d.ownWrite("a", "b")
	if hold <= 0 {
		t.Fatal("the fourth own write in a row was not held")
	}
	if d.h.held("ns/x", d.now) != hold || d.h.held("ns/other", d.now) != 0 {
		t.Fatalf("held: %s for the key (want %s), %s for another", d.h.held("ns/x", d.now), hold, d.h.held("ns/other", d.now))
	}
	// Each further pass of the fight waits longer (the limiter is not
	// forgotten), and the warning is not repeated.
	for range 3 {
		next := d.ownWrite("a", "b")
		if next <= hold {
			t.Fatalf("hold %s after %s: not growing", next, hold)
		}
		hold = next
	}
	if w := d.logged(logrus.WarnLevel); len(w) != 1 || !strings.Contains(w[0], "handlers a and b keep rewriting v1/ConfigMap ns/x") {
		t.Fatalf("warnings %q, want one naming both handlers and the object", w)
	}
	// A pass that writes nothing ends the episode.
	if hold := d.pass(fmt.Sprint(d.rv), nil, nil); hold != 0 {
		t.Fatalf("clean pass held %s", hold)
	}
	if d.h.held("ns/x", d.now) != 0 || d.h.tracked.Load() != 0 {
		t.Fatal("the key is still held or tracked after a clean pass")
	}
	if i := d.logged(logrus.InfoLevel); len(i) != 1 || !strings.Contains(i[0], "stopped rewriting") {
		t.Fatalf("info lines %q, want one saying the fight ended", i)
	}
	// A new fight is a new episode, logged again.
	for range 4 {
		hold = d.ownWrite("a")
	}
	if hold <= 0 || len(d.logged(logrus.WarnLevel)) != 2 {
		t.Fatalf("second episode: hold %s, warnings %q", hold, d.logged(logrus.WarnLevel))
	}
	if w := d.logged(logrus.WarnLevel)[1]; !strings.Contains(w, "handler a keeps rewriting") {
		t.Errorf("one handler's loop: %q", w)
	}
}

// Writes that answer someone else's changes are no loop however many come
// in a row: only a pass begun from the version the last pass wrote counts.
func TestHotLoopIgnoresWritesAnsweringOthers(t *testing.T) {
	d := newLoopDriver(t, 2)
	for i := range 20 {
		if hold := d.otherWrite("a"); hold != 0 {
			t.Fatalf("pass %d, begun from someone else's version, held %s", i+1, hold)
		}
	}
	if w := d.logged(logrus.WarnLevel); len(w) != 0 {
		t.Fatalf("warned: %q", w)
	}
}

func TestHotLoopOff(t *testing.T) {
	d := newLoopDriver(t, -1)
	for range 50 {
		if hold := d.ownWrite("a", "b"); hold != 0 {
			t.Fatalf("held %s with the check off", hold)
		}
	}
	if d.h.tracked.Load() != 0 {
		t.Fatal("keys tracked with the check off")
	}
}

// A handler that returns the object with a new resourceVersion wrote it; one
// that returns it changed in memory only, or nothing, did not.
func TestSharedHandlerReportsWrites(t *testing.T) {
	h := &sharedHandler{gvk: "v1/ConfigMap"}
	h.add("writes", SharedHandlerFunc(func(_ string, obj runtime.Object) (runtime.Object, error) {
		if obj == nil {
			return nil, nil
		}
		cm := obj.DeepCopyObject().(*corev1.ConfigMap)
		cm.ResourceVersion = "2"
		return cm, nil
	}))
	h.add("changes-in-memory", SharedHandlerFunc(func(_ string, obj runtime.Object) (runtime.Object, error) {
		if obj == nil {
			return nil, nil
		}
		cm := obj.DeepCopyObject().(*corev1.ConfigMap)
		cm.Data = map[string]string{"k": "v"}
		return cm, nil
	}))
	h.add("returns-nothing", SharedHandlerFunc(func(string, runtime.Object) (runtime.Object, error) { return nil, nil }))
	writes, err := h.run("ns/x", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{UID: "u1", ResourceVersion: "1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(writes) != 1 || writes[0] != (write{handler: "writes", resourceVersion: "2"}) {
		t.Fatalf("writes %+v, want one by the handler that wrote", writes)
	}
	if writes, err := h.run("ns/x", nil, nil); len(writes) != 0 || err != nil {
		t.Fatalf("writes %+v, error %v for a deleted object", writes, err)
	}
}

// A key's entry lasts only while its chain can go on: a pass that wrote
// nothing and began from the object gone (deleted), from a version its
// last pass did not write (someone else's), or that ended in ErrIgnore (no
// retry comes) drops it, even when the pass failed. Only a failed pass
// begun from the key's own last write (a conflict) keeps it.
func TestHotLoopForgetsKeysThatCannotContinue(t *testing.T) {
	for _, c := range []struct {
		name string
		from func(d *loopDriver) string
		err  error
	}{
		{"deleted, failing", func(*loopDriver) string { return "" }, errors.New("remove failed")},
		{"someone else's version, failing", func(d *loopDriver) string { d.rv++; return fmt.Sprint(d.rv) }, errors.New("failed")},
		{"ErrIgnore", func(d *loopDriver) string { return fmt.Sprint(d.rv) }, fmt.Errorf("nothing to retry: %w", ErrIgnore)},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newLoopDriver(t, 4)
			d.ownWrite("a")
			d.ownWrite("a")
			if len(d.h.keys) != 1 || d.h.tracked.Load() != 1 {
				t.Fatalf("%d entries, %d tracked after two own writes, want 1", len(d.h.keys), d.h.tracked.Load())
			}
			d.pass(c.from(d), nil, c.err)
			if len(d.h.keys) != 0 || d.h.tracked.Load() != 0 {
				t.Fatalf("%d entries, %d tracked after a pass that cannot continue the chain, want 0", len(d.h.keys), d.h.tracked.Load())
			}
		})
	}
	// A fight's key deleted while its deletion keeps failing: forgotten too.
	d := newLoopDriver(t, 2)
	for range 3 {
		d.ownWrite("a", "b")
	}
	d.pass("", nil, errors.New("remove failed"))
	if len(d.h.keys) != 0 || d.h.held("ns/x", d.now) != 0 {
		t.Fatalf("%d entries after the fighting key was deleted, want 0", len(d.h.keys))
	}
	// A conflict on the key's own last write keeps the chain (see
	// TestHotLoopNeedsALimitOfOwnWritesInARow) and so its entry.
	d = newLoopDriver(t, 4)
	d.ownWrite("a")
	d.pass(fmt.Sprint(d.rv), nil, errors.New("conflict"))
	if len(d.h.keys) != 1 {
		t.Fatalf("%d entries after a conflict on the key's own write, want 1", len(d.h.keys))
	}
}
