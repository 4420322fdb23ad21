package generated_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientdiscovery "k8s.io/client-go/discovery"

	"github.com/lariat-dev/lariat/generated/controllers/admissionregistration.k8s.io"
	"github.com/lariat-dev/lariat/generated/controllers/apiextensions.k8s.io"
	"github.com/lariat-dev/lariat/generated/controllers/apps"
	"github.com/lariat-dev/lariat/generated/controllers/autoscaling"
	"github.com/lariat-dev/lariat/generated/controllers/batch"
	"github.com/lariat-dev/lariat/generated/controllers/coordination.k8s.io"
	"github.com/lariat-dev/lariat/generated/controllers/core"
	"github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev"
	"github.com/lariat-dev/lariat/generated/controllers/discovery.k8s.io"
	"github.com/lariat-dev/lariat/generated/controllers/networking.k8s.io"
	"github.com/lariat-dev/lariat/generated/controllers/policy"
	"github.com/lariat-dev/lariat/generated/controllers/rbac.authorization.k8s.io"
	"github.com/lariat-dev/lariat/generated/controllers/storage.k8s.io"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// TestEveryGeneratedControllerListsItsKind creates every generated
// controller through its group factory, all sharing one generic factory,
// and lists its kind through the typed client. Resource names of built-in
// kinds are derived from their kind names by the generator; a List that
// fails for a kind the API server serves means the derivation is wrong.
func TestEveryGeneratedControllerListsItsKind(t *testing.T) {
	cp := controlplanetest.Start(t, controlplane.Options{CRDDirs: []string{"../crds"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f, err := generic.NewFactoryFromConfig(cp.Config(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	groups := []any{}
	add := func(g any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		groups = append(groups, g)
	}
	add(admissionregistration.NewFactory(f))
	add(apiextensions.NewFactory(f))
	add(apps.NewFactory(f))
	add(autoscaling.NewFactory(f))
	add(batch.NewFactory(f))
	add(coordination.NewFactory(f))
	add(core.NewFactory(f))
	add(demo.NewFactory(f))
	add(discovery.NewFactory(f))
	add(networking.NewFactory(f))
	add(policy.NewFactory(f))
	add(rbac.NewFactory(f))
	add(storage.NewFactory(f))

	disco, err := clientdiscovery.NewDiscoveryClientForConfig(cp.Config())
	if err != nil {
		t.Fatal(err)
	}
	served := func(gvk schema.GroupVersionKind) bool {
		list, err := disco.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
		if err != nil {
			return false
		}
		for _, r := range list.APIResources {
			if r.Kind == gvk.Kind {
				return true
			}
		}
		return false
	}

	listed, skipped := 0, 0
	for _, g := range groups {
		for _, c := range controllers(t, g) {
			gvk := c.MethodByName("GroupVersionKind").Call(nil)[0].Interface().(schema.GroupVersionKind)
			list := c.MethodByName("List")
			args := []reflect.Value{reflect.ValueOf(ctx)}
			if list.Type().NumIn() == 3 { // namespaced: (ctx, namespace, opts)
				args = append(args, reflect.ValueOf(""))
			}
			args = append(args, reflect.ValueOf(metav1.ListOptions{Limit: 1}))
			out := list.Call(args)
			err, _ := out[1].Interface().(error)
			switch {
			case err == nil:
				listed++
			case !served(gvk):
				t.Logf("%s is not served by this API server (a disabled feature); skipped", gvk)
				skipped++
			default:
				t.Errorf("list %s: %v", gvk, err)
			}
		}
	}
	if listed == 0 || skipped > 2 {
		t.Fatalf("%d kinds listed, %d not served; want (nearly) every generated kind served and listed", listed, skipped)
	}
	t.Logf("%d generated controllers listed their kinds, %d kinds not served", listed, skipped)
}

// controllers calls the group accessor of a group factory, then every
// version accessor and every kind accessor, and returns the controllers.
func controllers(t *testing.T, groupFactory any) []reflect.Value {
	t.Helper()
	var out []reflect.Value
	fv := reflect.ValueOf(groupFactory)
	for i := range fv.NumMethod() {
		m := fv.Type().Method(i)
		// The group accessor is the one method returning the group
		// Interface with no arguments, besides the embedded factory's.
		if m.Type.NumIn() != 1 || m.Type.NumOut() != 1 || m.Type.Out(0).Kind() != reflect.Interface || m.Type.Out(0).Name() != "Interface" {
			continue
		}
		group := fv.Method(i).Call(nil)[0]
		for j := range group.NumMethod() {
			version := group.Method(j).Call(nil)[0]
			for k := range version.NumMethod() {
				res := version.Method(k).Call(nil)
				if err, _ := res[1].Interface().(error); err != nil {
					t.Fatalf("%s: %v", version.Type().Method(k).Name, err)
				}
				out = append(out, res[0])
			}
		}
	}
	return out
}
