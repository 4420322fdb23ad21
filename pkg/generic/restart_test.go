package generic_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestFactoryStartsAgainAfterContextEnded: a generic Factory started,
// stopped and started again with a new context runs its typed handlers and
// serves its typed cache again.
func TestFactoryStartsAgainAfterContextEnded(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newFactory(t, cp.Config(), ns)
	cms := newConfigMaps(t, f)
	var seen counter
	cms.OnChange(t.Context(), "count", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm != nil && cm.Name == "after" {
			seen.inc()
		}
		return cm, nil
	})
	first, cancel := context.WithCancel(context.Background())
	if err := f.Start(first, 2); err != nil {
		t.Fatal(err)
	}
	createCM(t, ns, "before")
	eventually(t, "the first term's cache", func() bool {
		_, err := cms.Cache().Get(ns, "before")
		return err == nil
	})
	cancel()

	start(t, f)
	createCM(t, ns, "after")
	eventually(t, "the handler after the restart", func() bool { return seen.get() > 0 })
	if _, err := cms.Cache().Get(ns, "after"); err != nil {
		t.Fatalf("the typed cache does not serve objects created after the restart: %v", err)
	}
}
