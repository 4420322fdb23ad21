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

// TestAdv10LabelsRemovedDuringADrainHandTheObjectOverUnacknowledged: an
// object drains from member A (its handler for it still runs: a drain
// waits for that) to member B. A user's write that drops the ring's
// labels (kubectl replace of the object's manifest, a GitOps sync with
// Replace, kubectl label ...-) looks to the sharder like A's
// acknowledgement: the object reads unassigned, and it assigns it to B,
// whose handler then runs while A's, begun before, still does. Only A's
// gate may let go of the object; an unassigned object that was on a live
// member without its acknowledgement is not free.
func TestAdv10LabelsRemovedDuringADrainHandTheObjectOverUnacknowledged(t *testing.T) {
	advOpen(t, "the ring's labels removed by a user during a drain hand the object over while the draining member's handler still runs")
	adv10UsersLabels(t, "dropped the ring's labels during the drain, and the sharder took that for A's acknowledgement", true,
		func(cm *corev1.ConfigMap, _ string) { cm.Labels = nil })
}

// TestAdv10AssignmentWrittenByAUserHandsTheObjectOver: a user's write
// that sets the assignment label to another member (a saved manifest
// applied again, which carries the assignment of its day) moves the
// object with no drain at all: member B's cache has it, and its handler
// runs while member A's still does. Nothing but A's gate should let go of
// an object A holds.
func TestAdv10AssignmentWrittenByAUserHandsTheObjectOver(t *testing.T) {
	advOpen(t, "the assignment label written by a user hands an object over while its member's handler still runs")
	adv10UsersLabels(t, "set the assignment to member B", false,
		func(cm *corev1.ConfigMap, b string) { cm.Labels = map[string]string{AssignmentLabel("advunlabel"): b} })
}

// adv10UsersLabels creates X on member A, wanted on member B, holds A's
// handler for it and, with drain, lets a sharder ask A to drain it; then
// writes X as write makes it (given B's ID), and fails if B's handler for
// X begins while A's still runs.
func adv10UsersLabels(t *testing.T, what string, drain bool, write func(cm *corev1.ConfigMap, b string)) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: "advunlabel", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	timings := []leader.Option{leader.WithLeaseDuration(60 * time.Second), leader.WithRenewDeadline(50 * time.Second), leader.WithRetryPeriod(250 * time.Millisecond)}
	spans := &advSpans{release: make(chan struct{})}
	a := advMember(t, ring, "a", kube.CoordinationV1(), spans, timings, false)
	b := advMember(t, ring, "b", kube.CoordinationV1(), spans, timings, false)
	var releaseOnce sync.Once
	releaseA := func() { releaseOnce.Do(func() { close(spans.release) }) }
	t.Cleanup(releaseA)
	ctx := t.Context()

	// X: a name the sharder wants on B, created on A (as a member that
	// held it before B joined would have it), its handler on A held.
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
	if drain {
		adv10Drain(t, ring, x)
	}
	// The user's write.
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, x, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	write(cm, b.ID())
	cm.Data = map[string]string{"from": "manifest"}
	if _, err := kube.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "B handles X, or A's handler for X ends", func() bool {
		_, bRan := spans.find("b", x, false)
		_, aRuns := spans.find("a", x, true)
		return bRan || !aRuns
	})
	aRun, aRuns := spans.find("a", x, true)
	bRun, bRan := spans.find("b", x, false)
	releaseA()
	if bRan && aRuns {
		t.Fatalf("member B's handler for ConfigMap %s began (run %+v) while member A's, begun before, still ran (run %+v): a user's write %s",
			x, bRun, aRun, what)
	}
}

// adv10Drain starts a sharder for ring and waits until it asked the
// member holding x to drain it.
func adv10Drain(t *testing.T, ring Ring, x string) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	s, err := NewSharder(cfg, ring, SharderOptions{Namespace: ring.Namespace, Leader: []leader.Option{leader.WithIdentity("sharder")}, Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Run(t, s.Run)
	controlplanetest.Eventually(t, time.Minute, "X drains from A", func() bool {
		cm, err := kube.CoreV1().ConfigMaps(ring.Namespace).Get(t.Context(), x, metav1.GetOptions{})
		_, draining := cm.Labels[DrainLabel(ring.Name)]
		return err == nil && draining
	})
}
