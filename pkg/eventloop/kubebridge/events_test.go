package kubebridge_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
)

// TestResyncEventStaysAsItWas checks that changes applied after a resync
// do not alter the resync event, whose String the history reads later
// (on another goroutine: this was a data race).
func TestResyncEventStaysAsItWas(t *testing.T) {
	resync := &kubebridge.KubeResync{State: kubebridge.State{configMaps: {"ns/a": &corev1.ConfigMap{}}}}
	before := resync.String()
	state := resync.ApplyState(nil)
	change := &kubebridge.KubeStateChange{Resource: configMaps, Key: "ns/b", NewValue: &corev1.ConfigMap{}}
	state = change.ApplyState(state)
	if got := resync.String(); got != before {
		t.Fatalf("resync changed from %q to %q", before, got)
	}
	if n := state.(kubebridge.State).Len(); n != 2 {
		t.Fatalf("loop state has %d objects, want 2", n)
	}
}
