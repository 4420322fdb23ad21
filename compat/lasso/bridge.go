package lasso

import (
	"context"
	"fmt"

	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/eventloop/kubebridge"
)

// KindController is what the event loop bridge needs of a wrangler
// generated controller; wrangler's generic.ControllerMeta has both
// methods.
type KindController interface {
	// GroupVersionKind returns the controller's kind.
	GroupVersionKind() schema.GroupVersionKind
	// Informer returns the kind's shared informer.
	Informer() toolscache.SharedIndexInformer
}

// Bridge is Lariat's event loop bridge over the factory's core, taking
// wrangler's controllers, so that a wrangler operator adds the event loop
// and the KV scheduler without porting anything else. Its other methods
// are kubebridge.Bridge's, used in the same order.
type Bridge struct {
	*kubebridge.Bridge
	factory *SharedControllerFactory
}

// NewBridge returns an event loop bridge reading the factory's caches.
func (f *SharedControllerFactory) NewBridge(log logrus.FieldLogger) *Bridge {
	return &Bridge{Bridge: kubebridge.New(f.controllers, log), factory: f}
}

// WatchController feeds the kind of c, a controller made by a wrangler
// factory (or lasso code) on this adapter, to the loop, with the same
// objects c's handlers see. A controller of another factory (wrangler's own
// lasso core) is refused: the bridge reads this factory's caches, and
// would feed the loop from a second informer that c's handlers never see.
func (b *Bridge) WatchController(ctx context.Context, c KindController, opts ...kubebridge.WatchOption) error {
	gvk := c.GroupVersionKind()
	informer := b.factory.controllers.SharedCacheFactory().Informers()[gvk]
	if informer == nil || c.Informer() != informer {
		return fmt.Errorf("bridge: the %s controller is not on this factory (was its wrangler factory given FactoryOptions.SharedControllerFactory?)", cache.KindLabel(gvk))
	}
	return b.WatchKind(ctx, gvk, opts...)
}
