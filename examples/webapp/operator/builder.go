package operator

import (
	"k8s.io/apimachinery/pkg/runtime"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// builder is a handler that keeps one object per WebApp: it builds the
// object of every WebApp an event touches and withdraws the object of a
// WebApp that was deleted. The config renderer and the workload builder
// are builders.
type builder struct {
	name  string // of the handler
	verb  string // what it did, for the event history
	inv   *inventory
	key   func(namespace, name string) string
	build func(txn eventloop.ResyncOperations, app *demov1.WebApp) runtime.Object
}

// String implements eventloop.EventHandler.
func (b *builder) String() string { return b.name }

// HandlesEvent implements eventloop.EventHandler.
func (b *builder) HandlesEvent(eventloop.Event) bool { return true }

// Revert implements eventloop.EventHandler.
func (b *builder) Revert(eventloop.Event) error { return nil }

// Resync implements eventloop.EventHandler.
func (b *builder) Resync(_ eventloop.Event, _ any, _ int, txn eventloop.ResyncOperations) error {
	b.inv.forTouched(func(_ string, app *demov1.WebApp) { b.put(txn, app) })
	return nil
}

// Update implements eventloop.EventHandler.
func (b *builder) Update(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
	b.inv.observe(ev)
	for _, key := range b.inv.removed {
		b.inv.remove(txn, b.key(splitAppKey(key)))
	}
	var done []string
	b.inv.forTouched(func(key string, app *demov1.WebApp) {
		b.put(txn, app)
		done = append(done, key)
	})
	return describe(b.verb, done), nil
}

func (b *builder) put(txn eventloop.ResyncOperations, app *demov1.WebApp) {
	b.inv.put(txn, b.key(app.Namespace, app.Name), b.build(txn, app))
}
