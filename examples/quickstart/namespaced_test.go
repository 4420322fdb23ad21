package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/lariat-dev/lariat/examples/quickstart/api/v1"
	"github.com/lariat-dev/lariat/examples/quickstart/generated/controllers/quickstart.lariat.dev"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// namespacedOperator starts the quickstart operator on ns alone, the way
// the README's test pattern does, and returns the keys of the Greetings
// its handlers saw.
func namespacedOperator(t *testing.T, ns string) func() []string {
	t.Helper()
	f, err := generic.NewFactoryFromConfig(cp.Config(), nil, &generic.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := register(t.Context(), f); err != nil {
		t.Fatal(err)
	}
	qs, err := quickstart.NewFactory(f)
	if err != nil {
		t.Fatal(err)
	}
	greetings, err := qs.Quickstart().V1().Greeting()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	greetings.OnChange(t.Context(), "seen", func(key string, _ *v1.Greeting) (*v1.Greeting, error) {
		mu.Lock()
		seen = append(seen, key)
		mu.Unlock()
		return nil, nil
	})
	if err := f.Start(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// TestNamespacedOperatorsShareAControlPlane: two tests' operators on one
// control plane, each scoped to its test's namespace, each make their own
// Greeting Ready and never handle the other's.
func TestNamespacedOperatorsShareAControlPlane(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	nsA := controlplanetest.Namespace(t, cp.Config())
	nsB := controlplanetest.Namespace(t, cp.Config())
	seenA, seenB := namespacedOperator(t, nsA), namespacedOperator(t, nsB)

	f, err := generic.NewFactoryFromConfig(cp.Config(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := quickstart.NewFactory(f)
	if err != nil {
		t.Fatal(err)
	}
	greetings, err := qs.Quickstart().V1().Greeting()
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{nsA, nsB} {
		if _, err := greetings.Create(ctx, &v1.Greeting{
			ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns},
			Spec:       v1.GreetingSpec{Message: "hello from " + ns},
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range []string{nsA, nsB} {
		eventually(ctx, t, "Greeting Ready in "+ns, func() (bool, any) {
			g, err := greetings.Get(ctx, ns, "hello", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return ready.IsTrue(g.Status.Conditions) && g.Status.ObservedGeneration == g.Generation, g.Status
		})
	}
	for ns, seen := range map[string]func() []string{nsA: seenA, nsB: seenB} {
		// "seen" runs after the operator's own handler in the same pass,
		// so Ready can be on the server a moment before it has run.
		var keys []string
		eventually(ctx, t, "the operator of "+ns+" seeing its Greeting", func() (bool, any) {
			keys = seen()
			return len(keys) > 0, keys
		})
		for _, key := range keys {
			if !strings.HasPrefix(key, ns+"/") {
				t.Errorf("the operator of %s handled %s", ns, key)
			}
		}
	}
}
