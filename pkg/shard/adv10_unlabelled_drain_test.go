package shard

import (
	"fmt"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv10LabelsRemovedDuringADrainHandTheObjectOverUnacknowledged: an
// object drains from member A (its handler for it still runs: a drain
// waits for that) to member B. A user's write that drops the ring's
// labels (kubectl replace of the object's manifest, a GitOps sync with
// Replace, kubectl label ...-) looked to the sharder like A's
// acknowledgement: the object read unassigned, and it assigned it to B,
// whose handler then ran while A's, begun before, still did. Only A's
// gate lets go of the object, by the release it writes into the trail:
// the sharder writes A's labels back, and B gets the object once A
// acknowledged.
func TestAdv10LabelsRemovedDuringADrainHandTheObjectOverUnacknowledged(t *testing.T) {
	adv10UsersLabels(t, "dropped the ring's labels during the drain, and the sharder took that for A's acknowledgement", true,
		func(cm *corev1.ConfigMap, _ string) { cm.Labels = nil })
}

// TestAdv10ManifestReplacedDuringADrainKeepsTheObjectOnItsMember: as
// above, but the user's write drops the trail annotation too (a replace
// with a manifest that has neither): the object reads as a new one, and
// the sharder would assign it to B; the sharder term that saw it on A
// keeps it there until A acknowledges.
func TestAdv10ManifestReplacedDuringADrainKeepsTheObjectOnItsMember(t *testing.T) {
	adv10UsersLabels(t, "dropped the ring's labels and the trail during the drain, and the sharder took the object for a new one", true,
		func(cm *corev1.ConfigMap, _ string) { cm.Labels, cm.Annotations = nil, nil })
}

// TestAdv10AssignmentWrittenByAUserHandsTheObjectOver: a user's write
// that sets the assignment label to another member (a saved manifest
// applied again, which carries the assignment of its day) moved the
// object with no drain at all: member B's cache had it, and its handler
// ran while member A's still did. B's gate refuses an object whose trail
// names another member (refused_total{reason="untrailed"}).
func TestAdv10AssignmentWrittenByAUserHandsTheObjectOver(t *testing.T) {
	adv10UsersLabels(t, "set the assignment to member B", false,
		func(cm *corev1.ConfigMap, b string) { cm.Labels = map[string]string{AssignmentLabel("advunlabel"): b} })
}

// adv10UsersLabels creates X on member A, wanted on member B, holds A's
// handler for it and, with drain, lets a sharder ask A to drain it; then
// writes X as write makes it (given B's ID), and fails if B's handler for
// X begins while A's still runs. It waits for the answer to the write
// (with drain, the sharder wrote A's labels back; without, B's gate
// refused X), then lets A's handler return; with drain, B then handles X
// (A acknowledged), after A's handler ended.
func adv10UsersLabels(t *testing.T, what string, drain bool, write func(cm *corev1.ConfigMap, b string)) {
	adv10UsersLabelsGuarded(t, what, drain, false, write)
}

// adv10UsersLabelsGuarded is adv10UsersLabels, and with guarded, the ring
// guard installed (adv11Guard) and the write sent as another user than
// the operator's (adv11User): the write must be refused, leave the ring's
// labels and trail as they were, and B's handler must not begin while A's
// runs.
func adv10UsersLabelsGuarded(t *testing.T, what string, drain, guarded bool, write func(cm *corev1.ConfigMap, b string)) {
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
	if guarded {
		adv11Guard(t, ring)
	}
	if drain {
		adv10Drain(t, ring, x)
	}
	// The user's write.
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, x, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := adv11RingKeys(cm, ring.Name)
	write(cm, b.ID())
	cm.Data = map[string]string{"from": "manifest"}
	if guarded {
		adv11GuardedAnswer(t, ring, cm, before, spans, releaseA, drain)
		return
	}
	written, err := kube.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	answered := func() bool {
		if !drain {
			var m dto.Metric
			if err := b.metrics.refused.WithLabelValues("v1/ConfigMap", refusedUntrailed).Write(&m); err != nil {
				t.Fatal(err)
			}
			return m.GetCounter().GetValue() > 0
		}
		cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, x, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, draining := cm.Labels[DrainLabel(ring.Name)]
		return cm.ResourceVersion != written.ResourceVersion && cm.Labels[AssignmentLabel(ring.Name)] == a.ID() && draining
	}
	controlplanetest.Eventually(t, time.Minute, "B handles X, or the write is answered (the sharder wrote A's labels back, or B's gate refused X)", func() bool {
		_, bRan := spans.find("b", x, false)
		return bRan || answered()
	})
	aRun, aRuns := spans.find("a", x, true)
	bRun, bRan := spans.find("b", x, false)
	if bRan && aRuns {
		t.Fatalf("member B's handler for ConfigMap %s began (run %+v) while member A's, begun before, still ran (run %+v): a user's write %s",
			x, bRun, aRun, what)
	}
	releaseA()
	if !drain {
		return
	}
	controlplanetest.Eventually(t, time.Minute, "B handles X once A acknowledged", func() bool {
		_, bRan := spans.find("b", x, false)
		return bRan
	})
	aRun, _ = spans.find("a", x, false)
	if bRun, _ = spans.find("b", x, false); aRun.end == 0 || bRun.start < aRun.end {
		t.Fatalf("member B's handler for ConfigMap %s began (run %+v) before member A's ended (run %+v)", x, bRun, aRun)
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
