package kubedescriptor_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestDriftInAFieldNoManagerOwnsIsRepaired: a Secret applied with
// stringData is stored as data, which no field manager's Apply entry owns;
// a hand edit of data.password is drift a resync repairs, judged by one
// dry run per outside write (none for the descriptor's own writes, none
// again at a version already judged), and another manager's annotation is
// neither drift nor touched by the repair.
func TestDriftInAFieldNoManagerOwnsIsRepaired(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	secrets := controlplanetest.Clientset(cp.Config()).CoreV1().Secrets(ns)
	key := kubedescriptor.KeyFor(secretKind, ns, "s")
	var dryRuns atomic.Int32
	// Scoped to ns: other tests' Secrets of this field manager are not
	// this scheduler's to judge or delete.
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPatch && req.URL.Query().Get("dryRun") != "" {
				dryRuns.Add(1)
			}
			return next.RoundTrip(req)
		})
	})
	clients, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := scheduler(t, secretKind, kubedescriptor.Options{Clients: clients, Namespace: ns})
	resync := func(what string, wantOps int, wantDryRuns int32) {
		t.Helper()
		before := dryRuns.Load()
		ops := executed(commit(t, s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync)))
		if len(ops) != wantOps {
			t.Fatalf("%s: resync executed %v, want %d operations", what, ops, wantOps)
		}
		if n := dryRuns.Load() - before; n != wantDryRuns {
			t.Fatalf("%s: resync sent %d dry runs, want %d", what, n, wantDryRuns)
		}
	}
	edit := func(manager string, change func(map[string]string, map[string][]byte)) {
		t.Helper()
		live, err := secrets.Get(t.Context(), "s", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if live.Annotations == nil {
			live.Annotations = map[string]string{}
		}
		change(live.Annotations, live.Data)
		if _, err := secrets.Update(t.Context(), live, metav1.UpdateOptions{FieldManager: manager}); err != nil {
			t.Fatal(err)
		}
	}

	commit(t, s.StartNBTransaction().SetValue(key, stringDataSecret(ns, "app:1")))
	resync("right after the apply", 0, 0)

	edit("annotator", func(a map[string]string, _ map[string][]byte) { a["team"] = "sre" })
	resync("another manager's annotation", 0, 1)
	resync("again at the same version", 0, 0)

	edit("kubectl-edit", func(_ map[string]string, d map[string][]byte) { d["password"] = []byte("by-hand") })
	resync("data.password edited by hand", 1, 1)
	live, err := secrets.Get(t.Context(), "s", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(live.Data["password"]); got != "app:1" {
		t.Fatalf("data.password edited by hand was not repaired: %q, want %q", got, "app:1")
	}
	if live.Annotations["team"] != "sre" {
		t.Fatalf("the repair removed another manager's annotation: %v", live.Annotations)
	}
	resync("after the repair, the descriptor's own write", 0, 0)
}
