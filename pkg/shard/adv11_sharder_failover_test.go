package shard

import (
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv11ReplaceDroppingLabelsAndTrailThenANewSharderHandsTheObjectOver:
// X runs on member A (its trail names A; A's handler for it is held),
// wanted on member B. A user's replace drops the ring's labels and the
// trail (a manifest that has neither). The sharder's memory by UID keeps
// X on A, but only in the term that saw it there: a sharder elected
// after the write (a failover, a rolling upgrade of the sharder's
// Deployment) reads X as new and assigns it to B, whose handler then
// begins while A's still runs: two members at once. With the ring guard
// installed (RingPolicy; the new sharder installs it too, through
// SharderOptions.RingPolicy), the replace is refused, X keeps A's labels
// and trail, and the new sharder leaves it on A.
func TestAdv11ReplaceDroppingLabelsAndTrailThenANewSharderHandsTheObjectOver(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: "advfailover", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	timings := []leader.Option{leader.WithLeaseDuration(60 * time.Second), leader.WithRenewDeadline(50 * time.Second), leader.WithRetryPeriod(250 * time.Millisecond)}
	spans := &advSpans{release: make(chan struct{})}
	a := advMember(t, ring, "a", kube.CoordinationV1(), spans, timings, false)
	b := advMember(t, ring, "b", kube.CoordinationV1(), spans, timings, false)
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(spans.release) }) })
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
	// The ring guard, then the user's replace: a manifest with neither
	// labels nor trail, sent as another user than the operator's. The
	// guard refuses it; the labels and trail stay as they were.
	adv11Guard(t, ring)
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, x, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := adv11RingKeys(cm, ring.Name)
	cm.Labels, cm.Annotations = nil, nil
	cm.Data = map[string]string{"from": "manifest"}
	adv11UserUpdateRefused(t, ring, cm)
	if cm, err = kube.CoreV1().ConfigMaps(ns).Get(ctx, x, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if got := adv11RingKeys(cm, ring.Name); got != before {
		t.Fatalf("ConfigMap %s's ring labels and trail are %q after the refused replace, want %q", x, got, before)
	}
	// A sharder elected after the write: it never saw X on A.
	s, err := NewSharder(cfg, ring, SharderOptions{Namespace: ns, RingPolicy: &RingPolicyOptions{}, Leader: []leader.Option{leader.WithIdentity("sharder")}, Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Run(t, s.Run)
	controlplanetest.Eventually(t, time.Minute, "B handles X, or the sharder keeps it on A", func() bool {
		if _, bRan := spans.find("b", x, false); bRan {
			return true
		}
		cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, x, metav1.GetOptions{})
		return err == nil && cm.Labels[AssignmentLabel(ring.Name)] == a.ID()
	})
	aRun, aRuns := spans.find("a", x, true)
	if bRun, bRan := spans.find("b", x, false); bRan && aRuns {
		t.Fatalf("member B's handler for ConfigMap %s began (run %+v) while member A's, begun before, still ran (run %+v): a sharder elected after a replace that dropped the ring's labels and trail assigned X afresh",
			x, bRun, aRun)
	}
}
