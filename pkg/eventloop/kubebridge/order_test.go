package kubebridge_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
)

// timeline is a handler that writes down, in processing order, what it is
// shown of each ConfigMap's data["v"] (resync states and change events), and
// checks as it goes that every change starts from what it last saw of that
// key. The ConfigMap named gateName is left out; a change of it holds the
// loop until open is closed, the first time, so that events queue up.
type timeline struct {
	mu       sync.Mutex
	lines    []string          // "resync a=1 b=2" or "a 1->2", keys without the namespace
	last     map[string]string // key -> last value seen ("-": absent)
	mismatch []string          // changes whose PrevValue is not what was last seen
	failOn   func(n int) bool  // optional: fail the n-th change event (1-based)
	changes  int

	gateName string
	held     chan struct{} // closed when the loop is held
	open     chan struct{} // closing it releases the loop
	once     sync.Once
	onOpen   func(eventloop.UpdateOperations) // optional: runs when released
}

const gateName = "gate"

func newTimeline() *timeline {
	return &timeline{last: map[string]string{}, gateName: gateName, held: make(chan struct{}), open: make(chan struct{})}
}

func (t *timeline) String() string                    { return "timeline" }
func (t *timeline) HandlesEvent(eventloop.Event) bool { return true }
func (t *timeline) Revert(eventloop.Event) error      { return nil }

func short(key string) string { return key[strings.IndexByte(key, '/')+1:] }

func (t *timeline) Resync(_ eventloop.Event, state any, _ int, _ eventloop.ResyncOperations) error {
	st, _ := state.(kubebridge.State)
	t.mu.Lock()
	defer t.mu.Unlock()
	var keys []string
	for k := range st[configMaps] {
		if short(k) != t.gateName {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	line := "resync"
	for k := range t.last {
		t.last[k] = "-"
	}
	for _, k := range keys {
		v := value(st[configMaps][k])
		line += " " + short(k) + "=" + v
		t.last[k] = v
	}
	t.lines = append(t.lines, line)
	return nil
}

func (t *timeline) Update(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
	change, ok := ev.(*kubebridge.KubeStateChange)
	if !ok || change.Resource != configMaps {
		return "", nil
	}
	if short(change.Key) == t.gateName {
		t.once.Do(func() {
			close(t.held)
			<-t.open
			if t.onOpen != nil {
				t.onOpen(txn)
			}
		})
		return "", nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	prev, next := value(change.PrevValue), value(change.NewValue)
	if last, ok := t.last[change.Key]; ok && last != prev || !ok && prev != "-" {
		t.mismatch = append(t.mismatch, fmt.Sprintf("%s: change from %s, but the handler last saw %s", short(change.Key), prev, t.last[change.Key]))
	}
	t.last[change.Key] = next
	t.lines = append(t.lines, short(change.Key)+" "+prev+"->"+next)
	t.changes++
	if t.failOn != nil && t.failOn(t.changes) {
		return "", fmt.Errorf("failing change %d on purpose, to get an after-error healing resync", t.changes)
	}
	return "recorded", nil
}

func (t *timeline) snapshot() (lines, mismatch []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.lines), slices.Clone(t.mismatch)
}

// waitSeen waits until the handler's last view of every key is the wanted
// value ("-" for absent).
func (t *timeline) waitSeen(tb testing.TB, want map[string]string) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		t.mu.Lock()
		done := true
		for k, v := range want {
			if last, ok := t.last[k]; (ok && last != v) || (!ok && v != "-") {
				done = false
			}
		}
		t.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			lines, _ := t.snapshot()
			tb.Fatalf("the handler never saw %v; it saw:\n%s", want, strings.Join(lines, "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// expectSaw creates a marker ConfigMap after everything else and waits
// until the handler has seen it, so that every event queued before it has
// been processed; then it checks that the handler saw want, followed by the
// marker's creation, and that every change started from what it last saw.
func (t *timeline) expectSaw(tb testing.TB, w configMapWriter, ns string, want ...string) {
	tb.Helper()
	w.create("marker", "1")
	t.waitSeen(tb, map[string]string{ns + "/marker": "1"})
	want = append(want, "marker -->1")
	lines, mismatch := t.snapshot()
	if !slices.Equal(lines, want) {
		tb.Errorf("the handler saw:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	for _, m := range mismatch {
		tb.Error(m)
	}
}

// waitQueued waits until n events wait in the loop's queue: the bridge has
// pushed what the test just changed.
func waitQueued(tb testing.TB, loop *eventloop.Loop, n int) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for loop.Status().QueueLength != n {
		if time.Now().After(deadline) {
			tb.Fatalf("queue length %d, want %d", loop.Status().QueueLength, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// configMapWriter writes data["v"] of ConfigMaps.
type configMapWriter struct {
	tb  testing.TB
	ctx context.Context
	cms typedcorev1.ConfigMapInterface
}

func (w configMapWriter) create(name, v string) {
	w.tb.Helper()
	_, err := w.cms.Create(w.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": v}}, metav1.CreateOptions{})
	if err != nil {
		w.tb.Fatal(err)
	}
}

func (w configMapWriter) set(name, v string) {
	w.tb.Helper()
	cm, err := w.cms.Get(w.ctx, name, metav1.GetOptions{})
	if err != nil {
		w.tb.Fatal(err)
	}
	cm.Data["v"] = v
	if _, err := w.cms.Update(w.ctx, cm, metav1.UpdateOptions{}); err != nil {
		w.tb.Fatal(err)
	}
}

func (w configMapWriter) delete(name string) {
	w.tb.Helper()
	if err := w.cms.Delete(w.ctx, name, metav1.DeleteOptions{}); err != nil {
		w.tb.Fatal(err)
	}
}

// TestRefreshedSnapshotSupersedesOlderQueuedChanges: a resync that re-reads
// the caches when the loop processes it (here a RequestedResync, so
// Options.RefreshState; healing resyncs take the same path) is newer than
// the changes queued behind it. Those changes must not be applied on top of
// it: the handler would see x=8, then 8->7, a deletion of an object it does
// not have and a creation of one it has.
func TestRefreshedSnapshotSupersedesOlderQueuedChanges(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := configMapWriter{tb: t, ctx: ctx, cms: kube(cp.Config()).CoreV1().ConfigMaps(ns)}
	w.create(gateName, "0")
	w.create("x", "5")
	w.create("d", "1")
	tl := newTimeline()
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	loop := startLoop(t, ctx, ns, nil, log, tl)

	w.set(gateName, "1")
	<-tl.held
	w.set("x", "6")
	waitQueued(t, loop, 1)
	if err := loop.PushEvent(&eventloop.RequestedResync{}); err != nil {
		t.Fatal(err)
	}
	waitQueued(t, loop, 2)
	// Queued behind the resync, but read from the cache before the loop
	// gets to the resync, which reads it again.
	w.set("x", "7")
	waitQueued(t, loop, 3)
	w.delete("d")
	waitQueued(t, loop, 4)
	w.create("c", "1")
	waitQueued(t, loop, 5)
	w.set("x", "8")
	waitQueued(t, loop, 6)
	close(tl.open)
	tl.waitSeen(t, map[string]string{ns + "/x": "8", ns + "/d": "-", ns + "/c": "1"})
	tl.expectSaw(t, w, ns, "resync d=1 x=5", "x 5->6", "resync c=1 x=8")
}

// TestStaleSnapshotDoesNotReplaceANewerOne: a resync that overtakes queued
// events (a follow-up here; after-error healing does the same) refreshes
// the state; a KubeResync that was queued before it carries an older
// snapshot and must not take the loop back to it, nor may the changes
// queued around it.
func TestStaleSnapshotDoesNotReplaceANewerOne(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := configMapWriter{tb: t, ctx: ctx, cms: kube(cp.Config()).CoreV1().ConfigMaps(ns)}
	w.create(gateName, "0")
	w.create("x", "5")
	tl := newTimeline()
	tl.onOpen = func(txn eventloop.UpdateOperations) {
		if err := txn.PushFollowUp(&eventloop.RequestedResync{}); err != nil {
			t.Error(err)
		}
	}
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	loop := startLoop(t, ctx, ns, nil, log, tl)

	w.set(gateName, "1")
	<-tl.held
	w.set("x", "6")
	waitQueued(t, loop, 1)
	if err := loop.RequestResync(ctx); err != nil { // the bridge's KubeResync, x=6
		t.Fatal(err)
	}
	waitQueued(t, loop, 2)
	w.set("x", "7")
	waitQueued(t, loop, 3)
	close(tl.open)
	tl.expectSaw(t, w, ns, "resync x=5", "resync x=7", "resync x=7")
}

// TestHandlersNeverSeeAnObjectGoBackInTime: under a stream of updates to
// several ConfigMaps, with every kind of resync in between (the bridge's
// KubeResync, a RequestedResync that refreshes the state, after-error
// healing that overtakes queued events), the counter a handler sees for
// each object never moves backwards, and every change starts from what the
// handler last saw.
func TestHandlersNeverSeeAnObjectGoBackInTime(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := configMapWriter{tb: t, ctx: ctx, cms: kube(cp.Config()).CoreV1().ConfigMaps(ns)}
	const objects, rounds = 4, 50
	for i := range objects {
		w.create("cm-"+strconv.Itoa(i), "0")
	}
	tl := newTimeline()
	close(tl.open) // no gate: a slow handler lets events queue up instead
	tl.failOn = func(n int) bool { return n%17 == 0 }
	slow := eventloop.EventHandler(slowHandler{})
	cfg := eventloop.DefaultConfig()
	cfg.DelayAfterErrorHealing = eventloop.Duration{Duration: time.Millisecond}
	cfg.MaxAfterErrorHealingDelay = eventloop.Duration{Duration: 5 * time.Millisecond}
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	loop := startLoop(t, ctx, ns, &cfg, log, tl, slow)

	// One writer per object, as fast as the API server takes them, while
	// resyncs of every kind are pushed in between; the slow handler makes
	// the bridge's events queue up behind them.
	final := map[string]string{}
	var writers sync.WaitGroup
	for i := range objects {
		name := "cm-" + strconv.Itoa(i)
		final[ns+"/"+name] = strconv.Itoa(rounds)
		writers.Go(func() {
			for r := 1; r <= rounds; r++ {
				w.set(name, strconv.Itoa(r))
			}
		})
	}
	written := make(chan struct{})
	go func() { writers.Wait(); close(written) }()
	for n := 0; ; n++ {
		select {
		case <-written:
		default:
			var err error
			if n%2 == 0 {
				err = loop.RequestResync(ctx) // the bridge's KubeResync
			} else {
				err = loop.PushEvent(&eventloop.RequestedResync{}) // RefreshState
			}
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		break
	}
	tl.waitSeen(t, final)

	lines, mismatch := tl.snapshot()
	for _, m := range mismatch {
		t.Error(m)
	}
	last := map[string]int{}
	for _, line := range lines {
		for _, kv := range seenValues(line) {
			n, err := strconv.Atoi(kv[1])
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			if n < last[kv[0]] {
				t.Errorf("%s went back from %d to %d at %q", kv[0], last[kv[0]], n, line)
			}
			last[kv[0]] = n
		}
	}
	if err := loop.Health(); err != nil {
		t.Fatal(err)
	}
	resyncs, superseded := 0, 0
	for _, line := range lines {
		if strings.HasPrefix(line, "resync") {
			resyncs++
		}
	}
	for _, rec := range loop.History().Records() {
		if strings.Contains(rec.Description, "superseded by a newer snapshot") {
			superseded++
		}
	}
	t.Logf("%d lines, %d resyncs, %d changes superseded", len(lines), resyncs, superseded)
	if superseded == 0 {
		t.Error("no change was superseded: the test did not queue changes behind a resync")
	}
	if t.Failed() {
		t.Logf("the handler saw:\n%s", strings.Join(lines, "\n"))
	}
}

// seenValues returns the (key, value) pairs a timeline line shows the
// handler, leaving out absent values.
func seenValues(line string) [][2]string {
	var out [][2]string
	if rest, ok := strings.CutPrefix(line, "resync"); ok {
		for _, kv := range strings.Fields(rest) {
			k, v, _ := strings.Cut(kv, "=")
			out = append(out, [2]string{k, v})
		}
		return out
	}
	k, change, _ := strings.Cut(line, " ")
	_, next, _ := strings.Cut(change, "->")
	if next != "-" {
		out = append(out, [2]string{k, next})
	}
	return out
}

// slowHandler makes every change event take a little while, so that the
// bridge's events queue up behind the resyncs the test pushes.
type slowHandler struct{}

func (slowHandler) String() string                    { return "slow" }
func (slowHandler) HandlesEvent(eventloop.Event) bool { return true }
func (slowHandler) Revert(eventloop.Event) error      { return nil }
func (slowHandler) Resync(eventloop.Event, any, int, eventloop.ResyncOperations) error {
	return nil
}

func (slowHandler) Update(eventloop.Event, eventloop.UpdateOperations) (string, error) {
	time.Sleep(5 * time.Millisecond)
	return "", nil
}
