package shard

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv11UntrailedObjectsClaimedWhileTheSharderMovesThem: objects
// labelled for member A with no trail (assigned before trails existed, as
// after a rolling upgrade), while member B joins and a sharder starts at
// once: A's claims race the sharder's drains (both conditional writes).
// No object may be run by A and B at once, and every object must end on
// its wanted member with a trail naming it.
func TestAdv11UntrailedObjectsClaimedWhileTheSharderMovesThem(t *testing.T) {
	const n = 100
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: "advclaim", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	timings := []leader.Option{leader.WithLeaseDuration(60 * time.Second), leader.WithRenewDeadline(50 * time.Second), leader.WithRetryPeriod(250 * time.Millisecond)}
	spans := &advSpans{release: make(chan struct{})}
	a := advMember(t, ring, "a", kube.CoordinationV1(), spans, timings, false)
	ctx := t.Context()
	for i := range n {
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("x%d", i),
			Labels: map[string]string{AssignmentLabel(ring.Name): a.ID()}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	b := advMember(t, ring, "b", kube.CoordinationV1(), spans, timings, false)
	s, err := NewSharder(cfg, ring, SharderOptions{Namespace: ns, Leader: []leader.Option{leader.WithIdentity("sharder")}, Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	controlplanetest.Run(t, s.Run)
	ids := map[string]string{a.ID(): "a", b.ID(): "b"}
	controlplanetest.Eventually(t, 3*time.Minute, "every object on its wanted member, trailed and handled there", func() bool {
		list, err := kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, cm := range list.Items {
			want := Pick(ns+"/"+cm.Name, []string{a.ID(), b.ID()})
			_, draining := cm.Labels[DrainLabel(ring.Name)]
			if cm.Labels[AssignmentLabel(ring.Name)] != want || cm.Annotations[TrailAnnotation(ring.Name)] != want || draining {
				return false
			}
			if _, ok := spans.find(ids[want], cm.Name, false); !ok {
				return false
			}
		}
		return len(list.Items) == n
	})
	t.Logf("%d untrailed objects settled on two members in %v", n, time.Since(start))
	spans.mu.Lock()
	defer spans.mu.Unlock()
	for _, x := range spans.spans {
		for _, y := range spans.spans {
			if x.name == y.name && x.member != y.member && x.start < y.start && (x.end == 0 || y.start < x.end) {
				t.Errorf("member %s's handler for %s began (run %+v) while member %s's still ran (run %+v)", y.member, x.name, *y, x.member, *x)
			}
		}
	}
}
