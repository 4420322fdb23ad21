package apply_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// A kind whose group's discovery fails (an aggregated API that is down) is
// not a kind that is gone: its objects may well exist. Apply fails and keeps
// the kind in the inventory instead of dropping it and orphaning them. Once
// the group is really gone, the kind leaves the inventory.
func TestKindOfFailedDiscoveryIsNotGone(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "aggregated"}
	if err := a.Apply(ctx, set, cm("a", "1")); err != nil {
		t.Fatal(err)
	}
	group := fmt.Sprintf("broken%d.lariat.dev", time.Now().UnixNano())
	invName := "lariat-set-" + hashOf(t, kube, ns, "a")[:20]
	inv, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, invName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inv.Data["kinds"] += "\n" + group + "/Thing " + ns
	if _, err := kube.CoreV1().ConfigMaps(ns).Update(ctx, inv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// An APIService whose backend does not exist: the group is listed, its
	// resources cannot be discovered.
	apiServices := dynamic.NewForConfigOrDie(cp.Config()).Resource(schema.GroupVersionResource{
		Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"})
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1." + group},
		"spec": map[string]any{
			"group": group, "version": "v1", "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"insecureSkipTLSVerify": true, "service": map[string]any{"namespace": "default", "name": "absent"},
		},
	}}
	if _, err := apiServices.Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := false
	deleteService := func() {
		if !deleted {
			deleted = true
			if err := apiServices.Delete(context.Background(), svc.GetName(), metav1.DeleteOptions{}); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(deleteService)
	disco := discovery.NewDiscoveryClientForConfigOrDie(cp.Config())
	waitDiscovery(t, "the group's discovery to fail", func() bool {
		_, _, err := disco.ServerGroupsAndResources()
		var failed *discovery.ErrGroupDiscoveryFailed
		if errors.As(err, &failed) {
			for gv := range failed.Groups {
				if gv.Group == group {
					return true
				}
			}
		}
		return false
	})

	if err := a.Apply(ctx, set, cm("a", "2")); err == nil {
		t.Fatal("apply with a kind whose discovery failed: no error, want one")
	}
	inv, err = kube.CoreV1().ConfigMaps(ns).Get(ctx, invName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(inv.Data["kinds"], group) {
		t.Fatalf("the kind whose discovery failed left the inventory: %q", inv.Data["kinds"])
	}

	deleteService()
	waitDiscovery(t, "the group to be gone", func() bool {
		groups, err := disco.ServerGroups()
		if err != nil {
			return false
		}
		for _, g := range groups.Groups {
			if g.Name == group {
				return false
			}
		}
		return true
	})
	waitDiscovery(t, "an apply that drops the gone kind", func() bool {
		if err := a.Apply(ctx, set, cm("a", "3")); err != nil {
			t.Logf("apply: %v", err)
			return false
		}
		return true
	})
	inv, err = kube.CoreV1().ConfigMaps(ns).Get(ctx, invName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(inv.Data["kinds"], group) {
		t.Fatalf("the gone kind is still in the inventory: %q", inv.Data["kinds"])
	}
}

func waitDiscovery(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
