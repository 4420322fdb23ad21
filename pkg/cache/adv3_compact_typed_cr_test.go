package cache_test

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/internal/testkinds"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// adv3Widget is a typed Go type for the Widget CRD whose spec is free-form
// (map[string]any), as hand-written types of custom resources with
// x-kubernetes-preserve-unknown-fields parts often are. Lariat's client
// decodes it with apimachinery's JSON serializer, which keeps integers as
// int64.
type adv3Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              map[string]any `json:"spec,omitempty"`
}

func (w *adv3Widget) DeepCopyObject() runtime.Object {
	out := &adv3Widget{TypeMeta: w.TypeMeta}
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = runtime.DeepCopyJSON(w.Spec)
	return out
}

type adv3WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []adv3Widget `json:"items"`
}

func (l *adv3WidgetList) DeepCopyObject() runtime.Object {
	out := &adv3WidgetList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopyObject().(*adv3Widget))
	}
	return out
}

// adv3TypedWidgetFactory is a cache factory whose scheme has adv3Widget
// for the Widget kind.
func adv3TypedWidgetFactory(t *testing.T, opts *cache.SharedCacheFactoryOptions) *cache.SharedCacheFactory {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	gv := schema.GroupVersion{Group: testkinds.WidgetGVK.Group, Version: testkinds.WidgetGVK.Version}
	s.AddKnownTypeWithName(testkinds.WidgetGVK, &adv3Widget{})
	s.AddKnownTypeWithName(gv.WithKind("WidgetList"), &adv3WidgetList{})
	metav1.AddToGroupVersion(s, gv)
	clients, err := client.NewSharedClientFactory(cp.Config(), &client.SharedClientFactoryOptions{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return cache.NewSharedCacheFactory(clients, opts)
}

// TestAdv3CompactTypedCustomResourceKeepsIntegers: a compact cache of a
// typed custom resource (a Go type in the client's scheme, encoded as JSON)
// must hand out what the default cache holds. Its decode uses
// encoding/json, which reads a number in a free-form field as float64:
// an int64 beyond 2^53 comes back rounded (data lost), and every integer
// changes type (a handler's v.(int64) fails).
func TestAdv3CompactTypedCustomResourceKeepsIntegers(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	const size = int64(1<<53 + 1) // 9007199254740993: no float64 has it
	widgets := dynamic.NewForConfigOrDie(cp.Config()).Resource(testkinds.WidgetGVR).Namespace(ns)
	if _, err := widgets.Create(t.Context(), testkinds.Widget(ns, "big", size), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var in informers
	in.compactFactory = adv3TypedWidgetFactory(t, &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns},
		Kinds:   map[schema.GroupVersionKind]cache.KindOptions{testkinds.WidgetGVK: {Compact: ptr.To(true), HotObjects: ptr.To(1)}},
	})
	in.plainFactory = adv3TypedWidgetFactory(t, &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}})
	var err error
	if in.compact, err = in.compactFactory.ForKind(testkinds.WidgetGVK); err != nil {
		t.Fatal(err)
	}
	if in.plain, err = in.plainFactory.ForKind(testkinds.WidgetGVK); err != nil {
		t.Fatal(err)
	}
	in.start(t)
	plain := get(t, in.plain, ns+"/big").(*adv3Widget)
	if got := plain.Spec["size"]; got != size {
		t.Fatalf("the default cache holds spec.size %v (%T), want int64 %d: the test's premise is wrong", got, got, size)
	}
	compact := get(t, in.compact, ns+"/big").(*adv3Widget)
	if got := compact.Spec["size"]; got != size {
		t.Errorf("the compact cache hands out spec.size %v (%T); the server and the default cache have int64 %d", got, got, size)
	}
	sameJSON(t, fmt.Sprintf("%s/big read from the compact cache", ns), compact, plain)
}
