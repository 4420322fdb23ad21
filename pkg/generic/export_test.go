package generic

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/controller"
)

// RemoveHandlerForTest returns the handler OnRemove registers, so tests can
// hand it the stale objects a lagging cache would.
func RemoveHandlerForTest[T RuntimeMetaObject, TList runtime.Object](c *Controller[T, TList], ctx context.Context, name string, handler controller.SharedHandlerFunc) controller.SharedHandler {
	return c.newRemoveHandler(ctx, name, handler)
}
