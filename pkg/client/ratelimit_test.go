package client_test

import (
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/client"
)

// TestQPSBoundsTheWholeFactory: with rest.Config.QPS set, every client of a
// factory draws from one rate limiter, so the factory as a whole stays
// within QPS however many kinds it talks to.
func TestQPSBoundsTheWholeFactory(t *testing.T) {
	cfg := rest.CopyConfig(cp.Config())
	cfg.QPS, cfg.Burst = 20, 1
	clients, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []runtime.Object{&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.ServiceAccount{}, &appsv1.Deployment{}}
	var lists []runtime.Object
	var cs []*client.Client
	for _, obj := range kinds {
		c, err := clients.ForObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		_, list, err := clients.NewObjects(c.GroupVersionKind())
		if err != nil {
			t.Fatal(err)
		}
		cs, lists = append(cs, c), append(lists, list)
	}
	const perKind = 10
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() {
			for range perKind {
				if err := c.List(t.Context(), "default", lists[i].DeepCopyObject(), metav1.ListOptions{Limit: 1}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	// 40 requests at 20 per second with a burst of 1 take at least 1.95 s
	// through one limiter; one limiter per kind lets them through in 0.45 s.
	// Only the lower bound is checked, which a slow machine cannot break.
	total := len(cs) * perKind
	if min := time.Duration(float64(total-1) / float64(cfg.QPS) * float64(time.Second) * 0.9); time.Since(start) < min {
		t.Fatalf("%d requests over %d kinds took %v: more than QPS %v (they must take at least %v)", total, len(cs), time.Since(start), cfg.QPS, min)
	}
}
