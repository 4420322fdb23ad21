package client_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/client"
)

type countingTransport struct {
	next      http.RoundTripper
	discovery *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/api" || r.URL.Path == "/apis" {
		c.discovery.Add(1)
	}
	return c.next.RoundTrip(r)
}

// Re-reading discovery, on a missing kind or after a request answered
// NotFound for a whole resource, happens at most client.RediscoverBurst
// times per kind per client.RediscoverInterval, so a kind that keeps missing
// or flapping cannot hammer discovery. (The loops below take far less than
// the interval.)
func TestRediscoveryIsRateLimitedPerKind(t *testing.T) {
	var discovery atomic.Int64
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return countingTransport{next: rt, discovery: &discovery}
	})
	f, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	configMaps := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	before, err := f.ForKind(configMaps)
	if err != nil {
		t.Fatal(err)
	}
	perRead := discovery.Load()
	if perRead == 0 {
		t.Fatal("no discovery request counted")
	}

	for range 5 {
		if _, err := f.ForKind(testkinds.GadgetGVK); !meta.IsNoMatchError(err) {
			t.Fatalf("a kind that is not installed: %v, want NoMatch", err)
		}
	}
	if got := discovery.Load() - perRead; got != client.RediscoverBurst*perRead {
		t.Fatalf("5 lookups of a missing kind read discovery %d times, want %d", got/perRead, client.RediscoverBurst)
	}

	// ConfigMaps have not caused a re-read yet: the first Rediscover calls
	// re-read and drop the cached client, the next ones wait.
	count := discovery.Load()
	refreshed := 0
	for range 5 {
		if f.Rediscover(configMaps.GroupKind()) {
			refreshed++
		}
		if _, err := f.ForKind(configMaps); err != nil {
			t.Fatal(err)
		}
	}
	if refreshed != client.RediscoverBurst || discovery.Load()-count != client.RediscoverBurst*perRead {
		t.Fatalf("5 Rediscover calls refreshed %d times with %d discovery requests, want %d with %d",
			refreshed, discovery.Load()-count, client.RediscoverBurst, client.RediscoverBurst*perRead)
	}
	after, err := f.ForKind(configMaps)
	if err != nil {
		t.Fatal(err)
	}
	if after == before {
		t.Fatal("Rediscover kept the cached client of the kind")
	}
}

// A cached client is handed out only for the kind and scope it was made
// for: a CRD recreated with another scope gets a client of that scope.
func TestCachedClientMatchesScope(t *testing.T) {
	f, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	gvr := testkinds.GadgetGVK.GroupVersion().WithResource("gadgets")
	namespaced, err := f.ForResourceKind(gvr, "Gadget", true)
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := f.ForResourceKind(gvr, "Gadget", false)
	if err != nil {
		t.Fatal(err)
	}
	if !namespaced.Namespaced() || cluster.Namespaced() {
		t.Fatalf("asked for a cluster-scoped client after a namespaced one, got namespaced=%v", cluster.Namespaced())
	}
	again, err := f.ForResourceKind(gvr, "Gadget", false)
	if err != nil || again != cluster {
		t.Fatalf("the same request did not get the cached client: %v", err)
	}
}

// A kind whose lookups missed while its CRD was being installed has spent
// its re-reads on those misses; a request that then finds the kind gone
// (its CRD deleted right after) must still be able to refresh the mapping:
// a stale mapping and a missing kind are different events, each with its own
// budget, or the first request after the deletion fails with NotFound until
// the interval has passed.
func TestRediscoverIsNotSpentByMissedLookups(t *testing.T) {
	f, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for range client.RediscoverBurst + 1 {
		if _, err := f.ForKind(testkinds.GadgetGVK); !meta.IsNoMatchError(err) {
			t.Fatalf("a kind that is not installed: %v, want NoMatch", err)
		}
	}
	if !f.Rediscover(testkinds.GadgetGVK.GroupKind()) {
		t.Fatal("Rediscover refused after lookups of the kind had missed: the misses spent its budget")
	}
}
