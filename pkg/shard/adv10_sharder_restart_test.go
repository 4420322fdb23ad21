package shard

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv10SharderReplacedMidDrainWaitsForTheAcknowledgement: an object
// drains from member A, whose handler for it still runs, when the sharder
// is replaced (stopped, another elected). The new sharder, once it sees
// the drain with both members live, does not move the object: it stays on
// A until A's gate acknowledges, and B's handler for it begins only after
// A's ended.
func TestAdv10SharderReplacedMidDrainWaitsForTheAcknowledgement(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: "advrestart", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	timings := []leader.Option{leader.WithLeaseDuration(60 * time.Second), leader.WithRenewDeadline(50 * time.Second), leader.WithRetryPeriod(250 * time.Millisecond)}
	spans := &advSpans{release: make(chan struct{})}
	a := advMember(t, ring, "a", kube.CoordinationV1(), spans, timings, false)
	b := advMember(t, ring, "b", kube.CoordinationV1(), spans, timings, false)
	var releaseOnce sync.Once
	releaseA := func() { releaseOnce.Do(func() { close(spans.release) }) }
	t.Cleanup(releaseA)
	ctx := t.Context()

	var x string
	for i := 0; x == ""; i++ {
		if name := fmt.Sprintf("x%d", i); Pick(ns+"/"+name, []string{a.ID(), b.ID()}) == b.ID() {
			x = name
		}
	}
	spans.mu.Lock()
	spans.hold.member, spans.hold.name = "a", x
	spans.mu.Unlock()
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: x,
		Labels: map[string]string{AssignmentLabel(ring.Name): a.ID()}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "A's handler for X runs (held)", func() bool {
		_, ok := spans.find("a", x, true)
		return ok
	})
	run := func(identity string) (*Sharder, func()) {
		s, err := NewSharder(cfg, ring, SharderOptions{Namespace: ns, Leader: []leader.Option{leader.WithIdentity(identity)}, Logger: controlplanetest.QuietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- s.Run(sctx) }()
		var once sync.Once
		stop := func() {
			once.Do(func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("sharder %s: %v", identity, err)
				}
			})
		}
		t.Cleanup(stop)
		return s, stop
	}
	_, stopFirst := run("sharder")
	controlplanetest.Eventually(t, time.Minute, "X drains from A", func() bool {
		cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, x, metav1.GetOptions{})
		_, draining := cm.Labels[DrainLabel(ring.Name)]
		return err == nil && draining
	})
	stopFirst()
	next, _ := run("sharder-next")
	controlplanetest.Eventually(t, time.Minute, "the next sharder sees X draining from A, both members live", func() bool {
		snap := next.Snapshot()
		if !snap.Leading || !snap.Synced {
			return false
		}
		live := 0
		for _, m := range snap.Members {
			if m.State == MemberLive && (m.ID == a.ID() || m.ID == b.ID()) {
				live++
			}
		}
		return live == 2 && slices.ContainsFunc(snap.Drains, func(d Drain) bool { return d.Key == ns+"/"+x && d.Member == a.ID() })
	})
	if run, ok := spans.find("b", x, false); ok {
		t.Fatalf("B's handler for %s ran (%+v) while A's still ran, after the sharder was replaced mid-drain", x, run)
	}
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, x, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cm.Labels[AssignmentLabel(ring.Name)]; got != a.ID() {
		t.Fatalf("X is assigned to %q before A acknowledged; want A (%s)", got, a.ID())
	}
	releaseA()
	controlplanetest.Eventually(t, time.Minute, "B handles X once A let go", func() bool {
		_, ok := spans.find("b", x, false)
		return ok
	})
	aRun, _ := spans.find("a", x, false)
	bRun, _ := spans.find("b", x, false)
	if aRun.end == 0 || bRun.start < aRun.end {
		t.Fatalf("B's run %+v began before A's run %+v ended", bRun, aRun)
	}
}
