package generic_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/generic"
)

// CoreFactory is what the code generator writes for an API group (here the
// core group, abridged): it embeds the operator's one generic.Factory and
// registers the group's types when it is built, before any controller.
type CoreFactory struct{ *generic.Factory }

// NewCoreFactory adds the core group to f.
func NewCoreFactory(f *generic.Factory) (*CoreFactory, error) {
	if err := f.AddToScheme(corev1.AddToScheme); err != nil {
		return nil, err
	}
	return &CoreFactory{Factory: f}, nil
}

// ConfigMapController is a generated per-kind interface.
type ConfigMapController interface {
	generic.ControllerInterface[*corev1.ConfigMap, *corev1.ConfigMapList]
}

// ConfigMap returns the ConfigMap controller; every call returns a view of
// the same shared controller.
func (f *CoreFactory) ConfigMap() (ConfigMapController, error) {
	return generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](
		corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps", true, f.ControllerFactory())
}

// RBACFactory is the generated factory of a second group.
type RBACFactory struct{ *generic.Factory }

// NewRBACFactory adds the rbac.authorization.k8s.io group to f.
func NewRBACFactory(f *generic.Factory) (*RBACFactory, error) {
	if err := f.AddToScheme(rbacv1.AddToScheme); err != nil {
		return nil, err
	}
	return &RBACFactory{Factory: f}, nil
}

// ClusterRoleController is a generated per-kind interface of a
// cluster-scoped kind.
type ClusterRoleController interface {
	generic.NonNamespacedControllerInterface[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList]
}

// ClusterRole returns the ClusterRole controller.
func (f *RBACFactory) ClusterRole() (ClusterRoleController, error) {
	return generic.NewNonNamespacedController[*rbacv1.ClusterRole, *rbacv1.ClusterRoleList](
		rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), "clusterroles", f.ControllerFactory())
}

// An operator builds one Factory and hands it to every group it uses; the
// groups register their types, then share one client, cache and controller
// factory.
func ExampleFactory() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, err := rest.InClusterConfig()
	if err != nil {
		fmt.Println(err)
		return
	}
	// An empty scheme: each group adds its own kinds.
	factory, err := generic.NewFactoryFromConfig(cfg, runtime.NewScheme(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	core, err := NewCoreFactory(factory)
	if err != nil {
		fmt.Println(err)
		return
	}
	rbac, err := NewRBACFactory(factory)
	if err != nil {
		fmt.Println(err)
		return
	}

	configMaps, err := core.ConfigMap()
	if err != nil {
		fmt.Println(err)
		return
	}
	configMaps.OnChange(ctx, "log", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm == nil {
			fmt.Println("deleted", key)
		}
		return nil, nil
	})
	roles, err := rbac.ClusterRole()
	if err != nil {
		fmt.Println(err)
		return
	}
	roles.OnRemove(ctx, "audit", func(name string, role *rbacv1.ClusterRole) (*rbacv1.ClusterRole, error) {
		fmt.Println("cluster role", name, "is being deleted")
		return nil, nil
	})

	if err := factory.Start(ctx, 2); err != nil {
		fmt.Println(err)
		return
	}
	<-ctx.Done()
}
