package shard

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestHashKeyFollowsTheControllingOwnerOfTheOwnerKind(t *testing.T) {
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	follows := Kind{GVK: cm, Owner: schema.GroupKind{Group: "apps", Kind: "Deployment"}}
	yes, no := true, false
	obj := &metav1.ObjectMeta{Namespace: "ns", Name: "child", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "apps/v1", Kind: "Deployment", Name: "other", Controller: &no},
		{APIVersion: "apps/v1beta2", Kind: "Deployment", Name: "web", Controller: &yes},
	}}
	for _, c := range []struct {
		k          Kind
		namespaced bool
		want       string
	}{
		{follows, true, "ns/web"},
		{follows, false, "web"},
		{Kind{GVK: cm}, true, "ns/child"},
		{Kind{GVK: cm, Owner: schema.GroupKind{Kind: "Deployment"}}, true, "ns/child"}, // core group: not apps
	} {
		if got := HashKey(obj, c.k, c.namespaced); got != c.want {
			t.Errorf("HashKey(%v, namespaced=%v) = %q, want %q", c.k.Owner, c.namespaced, got, c.want)
		}
	}
	if got := HashKey(&metav1.ObjectMeta{Name: "node"}, follows, true); got != "node" {
		t.Errorf("cluster-scoped object without owner: %q", got)
	}
}

func TestRingValidate(t *testing.T) {
	cm := Kind{GVK: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}}
	if err := (Ring{Name: "r", Namespace: "ns", Kinds: []Kind{cm}}).Validate(); err != nil {
		t.Error(err)
	}
	for _, bad := range []Ring{
		{Name: "R", Namespace: "ns", Kinds: []Kind{cm}},
		{Name: "r", Kinds: []Kind{cm}},
		{Name: "r", Namespace: "ns"},
		{Name: "r", Namespace: "ns", Kinds: []Kind{cm, cm}},
		{Name: "r", Namespace: "ns", Kinds: []Kind{{GVK: schema.GroupVersionKind{Kind: "ConfigMap"}}}},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
}
