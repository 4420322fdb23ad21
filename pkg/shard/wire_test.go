package shard_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// TestFactoryOptionsAddsToSelectorsAndCopies: the member's selector is
// added to a sharded kind's own selector, or to the default's, never in
// place of it; kinds outside the ring are left alone; and the caller's
// options are not changed, so one set can serve several members.
func TestFactoryOptionsAddsToSelectorsAndCopies(t *testing.T) {
	deployments := appsv1.SchemeGroupVersion.WithKind("Deployment")
	daemonSets := appsv1.SchemeGroupVersion.WithKind("DaemonSet")
	statefulSets := appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	ring := shard.Ring{Name: ringName, Namespace: "default", Kinds: []shard.Kind{
		{GVK: configMapGVK},
		{GVK: deployments, Owner: schema.GroupKind{Kind: "ConfigMap"}},
		{GVK: daemonSets},
	}}
	cfg := &rest.Config{Host: "https://example.invalid"}
	m, err := shard.NewMember(kubernetes.NewForConfigOrDie(cfg).CoordinationV1(), ring, leader.WithIdentity("a"))
	if err != nil {
		t.Fatal(err)
	}
	own := controller.GateFunc(nil)
	in := &generic.FactoryOptions{
		Cache: cache.SharedCacheFactoryOptions{
			Default: cache.Options{LabelSelector: "app=web"},
			Kinds: map[schema.GroupVersionKind]cache.KindOptions{
				deployments:  {LabelSelector: ptr.To("tier=front")},
				daemonSets:   {LabelSelector: ptr.To("")},
				statefulSets: {LabelSelector: ptr.To("kept=yes")},
			},
		},
		Controller: controller.SharedControllerFactoryOptions{KindGates: map[schema.GroupVersionKind]controller.Gate{statefulSets: own}},
	}
	out := m.FactoryOptions(cfg, in)
	sel := shard.AssignmentLabel(ringName) + "=" + m.ID()
	if m.Selector() != sel {
		t.Errorf("Selector() = %q, want %q", m.Selector(), sel)
	}
	for gvk, want := range map[schema.GroupVersionKind]string{
		configMapGVK: "app=web," + sel,
		deployments:  "tier=front," + sel,
		daemonSets:   sel,
		statefulSets: "kept=yes",
	} {
		got := out.Cache.Kinds[gvk].LabelSelector
		if got == nil || *got != want {
			t.Errorf("%s: selector %v, want %q", gvk.Kind, got, want)
		}
	}
	for _, k := range ring.Kinds {
		if out.Controller.KindGates[k.GVK] == nil {
			t.Errorf("%s has no gate", k.GVK.Kind)
		}
	}
	if len(out.Controller.KindGates) != 4 {
		t.Errorf("gates for %d kinds, want the ring's 3 and the caller's own", len(out.Controller.KindGates))
	}
	if len(in.Cache.Kinds) != 3 || *in.Cache.Kinds[deployments].LabelSelector != "tier=front" || len(in.Controller.KindGates) != 1 {
		t.Errorf("the caller's options changed: %+v", in)
	}
}
