package generic_test

import (
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

var testGroupVersion = schema.GroupVersion{Group: "generic.test.lariat.dev", Version: "v1"}

// TestFactorySharedAcrossGroups runs the pattern of ExampleFactory: one
// factory, an empty scheme, two generated groups registering their kinds.
func TestFactorySharedAcrossGroups(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	scheme := runtime.NewScheme()
	f, err := generic.NewFactoryFromConfig(cp.Config(), scheme, &generic.FactoryOptions{
		Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}},
		Controller: controller.SharedControllerFactoryOptions{Logger: controlplanetest.QuietLogger()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if f.Scheme() != scheme {
		t.Fatal("the factory does not use the given scheme")
	}
	core, err := NewCoreFactory(f)
	if err != nil {
		t.Fatal(err)
	}
	rbac, err := NewRBACFactory(f)
	if err != nil {
		t.Fatal(err)
	}
	if !scheme.Recognizes(configMapGVK) || !scheme.Recognizes(rbacv1.SchemeGroupVersion.WithKind("ClusterRole")) {
		t.Fatal("the groups' kinds are not in the scheme")
	}
	if core.ControllerFactory() != rbac.ControllerFactory() {
		t.Fatal("groups got different controller factories")
	}

	configMaps, err := core.ConfigMap()
	if err != nil {
		t.Fatal(err)
	}
	again, err := core.ConfigMap()
	if err != nil {
		t.Fatal(err)
	}
	if configMaps.Informer() != again.Informer() {
		t.Error("two controllers of one kind do not share the informer")
	}
	if _, err := rbac.ClusterRole(); err != nil {
		t.Fatal(err)
	}

	// Building a group again is harmless; a new group is refused once
	// controllers exist, and nothing is added to the scheme.
	if _, err := NewCoreFactory(f); err != nil {
		t.Errorf("rebuilding a registered group: %v", err)
	}
	if err := f.AddToScheme(appsv1.AddToScheme); err == nil || !strings.Contains(err.Error(), "Deployment") {
		t.Errorf("registering a group late: %v, want an error naming its kinds", err)
	}
	if scheme.Recognizes(appsv1.SchemeGroupVersion.WithKind("Deployment")) {
		t.Error("a refused group was added to the scheme")
	}

	createCM(t, ns, "a")
	ctx := t.Context()
	if err := f.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if cm, err := configMaps.Cache().Get(ns, "a"); err != nil || cm.Name != "a" {
		t.Errorf("cache after Sync: %v, %v", cm, err)
	}
	synced, err := f.WaitForCacheSync(ctx)
	if err != nil || !synced[configMapGVK] {
		t.Errorf("WaitForCacheSync: %v, %v", synced, err)
	}

	// Handlers registered after Sync still run once Start starts the
	// controllers.
	seenA := make(chan struct{})
	var once counter
	configMaps.OnChange(ctx, "see", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if key == ns+"/a" && once.inc() == 1 {
			close(seenA)
		}
		return nil, nil
	})
	if err := f.Start(ctx, 1); err != nil {
		t.Fatal(err)
	}
	eventually(t, "handler after Start", func() bool {
		select {
		case <-seenA:
			return true
		default:
			return false
		}
	})
}

func TestFactoryAddToSchemeErrors(t *testing.T) {
	f, err := generic.NewFactoryFromConfig(cp.Config(), runtime.NewScheme(), nil)
	if err != nil {
		t.Fatal(err)
	}
	conflicting := func(s *runtime.Scheme) error {
		s.AddKnownTypeWithName(configMapGVK, &otherConfigMap{})
		return nil
	}
	if err := f.AddToScheme(corev1.AddToScheme); err != nil {
		t.Fatal(err)
	}
	if err := f.AddToScheme(conflicting); err == nil {
		t.Error("a kind registered with another Go type was accepted")
	}
	if err := f.AddToScheme(func(s *runtime.Scheme) error {
		s.AddKnownTypeWithName(configMapGVK, &otherConfigMap{})
		s.AddKnownTypeWithName(configMapGVK, &corev1.ConfigMap{}) // panics in runtime.Scheme
		return nil
	}); err == nil {
		t.Error("a registration that panics was accepted")
	}
	failing := errors.New("cannot register")
	if err := f.AddToScheme(func(*runtime.Scheme) error { return failing }); !errors.Is(err, failing) {
		t.Errorf("failing registration: %v", err)
	}
	if err := f.AddToScheme(nil); err == nil {
		t.Error("a nil registration function was accepted")
	}
	if gvks, _, err := f.Scheme().ObjectKinds(&corev1.ConfigMap{}); err != nil || len(gvks) != 1 || gvks[0] != configMapGVK {
		t.Errorf("the scheme changed: %v, %v", gvks, err)
	}
}

func TestNewFactoryOverExistingControllers(t *testing.T) {
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	controllers, err := controller.NewSharedControllerFactory(cache.NewSharedCacheFactory(clients, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := generic.NewFactory(controllers)
	if err != nil {
		t.Fatal(err)
	}
	if f.ControllerFactory() != controllers {
		t.Error("NewFactory does not use the given controller factory")
	}
	if _, err := NewCoreFactory(f); err != nil {
		t.Errorf("registering kinds the scheme has: %v", err)
	}
	if err := f.AddToScheme(func(s *runtime.Scheme) error {
		s.AddKnownTypes(testGroupVersion, &otherConfigMap{})
		return nil
	}); err == nil {
		t.Error("NewFactory accepted new kinds into a scheme that may be in use")
	}
	if _, err := generic.NewFactory(nil); err == nil {
		t.Error("NewFactory(nil) succeeded")
	}
}

func TestNewFactoryFromConfigErrors(t *testing.T) {
	if _, err := generic.NewFactoryFromConfig(nil, nil, nil); err == nil {
		t.Error("nil config accepted")
	}
	opts := &generic.FactoryOptions{Client: client.SharedClientFactoryOptions{Scheme: runtime.NewScheme()}}
	if _, err := generic.NewFactoryFromConfig(cp.Config(), runtime.NewScheme(), opts); err == nil {
		t.Error("two different schemes accepted")
	}
	// Without a scheme the factory gets client-go's kinds in a scheme of
	// its own, so registering into it leaves client-go's global one alone.
	f, err := generic.NewFactoryFromConfig(cp.Config(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Scheme().Recognizes(configMapGVK) {
		t.Error("the default scheme lacks the built-in kinds")
	}
	if err := f.AddToScheme(func(s *runtime.Scheme) error {
		s.AddKnownTypes(testGroupVersion, &otherConfigMap{})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if clientgoscheme.Scheme.Recognizes(testGroupVersion.WithKind("otherConfigMap")) {
		t.Error("registering changed client-go's global scheme")
	}
}
