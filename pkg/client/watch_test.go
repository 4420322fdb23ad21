package client_test

import (
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// settledGoroutines waits until the number of goroutines is at most want
// (goroutines take a moment to see a closed stream) and returns the last
// count.
func settledGoroutines(want int) int {
	deadline := time.Now().Add(10 * time.Second)
	n := runtime.NumGoroutine()
	for n > want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}

// TestStoppedWatchesLeaveNoGoroutine opens watches, lets an event reach
// each, and stops them without reading: every goroutine a watch started
// must end. Consumers such as client-go's reflector stop a watch whose
// events they no longer read.
func TestStoppedWatchesLeaveNoGoroutine(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx := t.Context()
	c, err := newFactory(t).ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	// Warm up the connection pool, whose goroutines outlive the watches.
	if err := c.List(ctx, ns, &corev1.ConfigMapList{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	before := settledGoroutines(0)

	const watches = 40
	ws := make([]watch.Interface, 0, watches)
	for range watches {
		w, err := c.Watch(ctx, ns, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	if err := c.Create(ctx, ns, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "event"}}, &corev1.ConfigMap{}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // let the event reach every watch
	for _, w := range ws {
		w.Stop()
	}
	// A few goroutines of the HTTP/2 connection may come and go.
	if after := settledGoroutines(before + 5); after > before+5 {
		t.Fatalf("%d watches stopped with an unread event left %d goroutines behind (%d before, %d after)",
			watches, after-before, before, after)
	}
}
