package controlplanetest

import (
	"slices"
	"sync"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// LeaseHolders watches the Lease namespace/name from now until the test
// ends, and returns a function giving the holders it went through, in the
// API server's order, each once per stretch: "" for a released Lease (no
// holder). Tests use it for evidence of how a Lease changed hands: a
// standby that took over from a release shows as the old holder, "", the
// new one; one that took over an expired Lease as the old holder, then
// the new one.
func LeaseHolders(t testing.TB, cfg *rest.Config, namespace, name string) func() []string {
	t.Helper()
	w, err := Clientset(cfg).CoordinationV1().Leases(namespace).Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatalf("watch lease %s/%s: %v", namespace, name, err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	var holders []string
	go func() {
		for ev := range w.ResultChan() {
			l, ok := ev.Object.(*coordinationv1.Lease)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			h := ""
			if l.Spec.HolderIdentity != nil {
				h = *l.Spec.HolderIdentity
			}
			mu.Lock()
			if len(holders) == 0 || holders[len(holders)-1] != h {
				holders = append(holders, h)
			}
			mu.Unlock()
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(holders)
	}
}

// HandedOverByRelease reports whether holders (from LeaseHolders) show
// from giving the Lease up (no holder) before to held it next.
func HandedOverByRelease(holders []string, from, to string) bool {
	for i := 0; i+2 < len(holders); i++ {
		if holders[i] == from && holders[i+1] == "" && holders[i+2] == to {
			return true
		}
	}
	return false
}
