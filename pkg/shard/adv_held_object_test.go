package shard

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// advRunStoppableSharder runs ring's sharder, elected as identity, and
// returns a stop that ends it and waits for its Run (also called when the
// test ends): the tests that replace one sharder by another need to stop
// the first before the second starts.
func advRunStoppableSharder(t *testing.T, ring Ring, identity string) (stop func()) {
	t.Helper()
	s, err := NewSharder(cp.Config(), ring, SharderOptions{Namespace: ring.Namespace, Leader: []leader.Option{leader.WithIdentity(identity)}, Logger: controlplanetest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("sharder %s: %v", identity, err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// advHoldOneOnA creates eight ConfigMaps in ring's namespace, named so that
// at least two hash to member a among members a and b (Pick is
// deterministic: with names fixed in advance all of them may hash to b,
// one run in 256), waits until one of a's is assigned to a and handled
// there, then makes a's next run for it slow (spans.hold), patches it, and
// returns its name once that held run began.
func advHoldOneOnA(t *testing.T, kube kubernetes.Interface, ring Ring, a, b *Member, spans *advSpans) string {
	t.Helper()
	ctx := t.Context()
	members := []string{a.ID(), b.ID()}
	var names []string
	onA := 0
	for i := 0; len(names) < 8 || onA < 2; i++ {
		name := fmt.Sprintf("c%d", i)
		if Pick(ring.Namespace+"/"+name, members) == a.ID() {
			onA++
		} else if len(names)-onA >= 6 {
			continue
		}
		names = append(names, name)
	}
	for _, name := range names {
		if _, err := kube.CoreV1().ConfigMaps(ring.Namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var x string
	controlplanetest.Eventually(t, 2*time.Minute, "an object assigned to A and handled by A", func() bool {
		for _, name := range names {
			cm, err := kube.CoreV1().ConfigMaps(ring.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil || cm.Labels[AssignmentLabel(ring.Name)] != a.ID() {
				continue
			}
			if _, ok := spans.find("a", name, false); ok {
				x = name
				return true
			}
		}
		return false
	})
	spans.mu.Lock()
	spans.hold.member, spans.hold.name = "a", x
	spans.mu.Unlock()
	if _, err := kube.CoreV1().ConfigMaps(ring.Namespace).Patch(ctx, x, "application/merge-patch+json", []byte(`{"data":{"k":"v"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "A's handler for X runs (held)", func() bool {
		_, ok := spans.find("a", x, true)
		return ok
	})
	return x
}
