package dependents

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/generic"
)

// ClusterOwners is what a registration needs of a cluster-scoped owner
// kind's typed controller; generated controllers of cluster-scoped kinds
// (generic.NonNamespacedController) have it.
type ClusterOwners[T generic.RuntimeMetaObject] interface {
	generic.StatusController[T]
	// Enqueue runs the owner's handlers again (its status).
	Enqueue(name string)
}

// ClusterScoped makes the controller of a cluster-scoped owner kind the
// owners of a registration: dependents.Register(ctx, f,
// dependents.ClusterScoped(namespaces), ...). A cluster-scoped owner's
// objects are cluster-scoped, or namespaced in the namespace they name
// (there is no owner's namespace to put them in; one that names none is
// refused, in the owner's status); with Options.Namespace, only in that
// namespace. RequiresOwner names such an owner with namespace "".
func ClusterScoped[T generic.RuntimeMetaObject](c ClusterOwners[T]) Owners[T] {
	return clusterOwners[T]{c: c}
}

type clusterOwners[T generic.RuntimeMetaObject] struct{ c ClusterOwners[T] }

// OnChange implements generic.StatusController.
func (o clusterOwners[T]) OnChange(ctx context.Context, name string, sync generic.ObjectHandler[T]) {
	o.c.OnChange(ctx, name, sync)
}

// UpdateStatus implements generic.StatusController.
func (o clusterOwners[T]) UpdateStatus(ctx context.Context, obj T) (T, error) {
	return o.c.UpdateStatus(ctx, obj)
}

// GroupVersionKind implements generic.StatusController.
func (o clusterOwners[T]) GroupVersionKind() schema.GroupVersionKind { return o.c.GroupVersionKind() }

// Enqueue implements Owners: a cluster-scoped owner has no namespace.
func (o clusterOwners[T]) Enqueue(_, name string) { o.c.Enqueue(name) }
