package operator

import (
	"context"
	"sync"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
)

// dependsOnIndex indexes WebApps by the "namespace/name" of each WebApp
// they depend on.
const dependsOnIndex = "dependsOn"

// watchDependents re-runs the status of the WebApps that depend on a
// WebApp when it appears, goes, or changes its spec: their status says
// whether it exists and whether it closes a cycle, and nothing in the
// scheduler changes when it merely appears. Its status writes are left
// out: re-running every dependent for each of them cost a chain of 100
// WebApps a third more time to converge.
func (o *Operator) watchDependents(ctx context.Context) error {
	err := o.webapps.Cache().AddIndexer(dependsOnIndex, func(app *demov1.WebApp) ([]string, error) {
		keys := make([]string, len(app.Spec.DependsOn))
		for i, dep := range app.Spec.DependsOn {
			keys[i] = appKey(app.Namespace, dep)
		}
		return keys, nil
	})
	if err != nil {
		return err
	}
	var mu sync.Mutex
	generations := map[string]int64{} // "namespace/name" -> generation last seen
	o.webapps.OnChange(ctx, "dependents", func(key string, app *demov1.WebApp) (*demov1.WebApp, error) {
		mu.Lock()
		last, known := generations[key]
		if app == nil {
			delete(generations, key)
		} else {
			generations[key] = app.Generation
		}
		mu.Unlock()
		if app != nil && known && last == app.Generation {
			return nil, nil
		}
		dependents, err := o.webapps.Cache().GetByIndex(dependsOnIndex, key)
		for _, d := range dependents {
			o.webapps.Enqueue(d.Namespace, d.Name)
		}
		return nil, err
	})
	return nil
}

// enqueueOnStatusChange re-runs the status handler of a WebApp whenever
// the scheduler changes the state of one of its values, and tells the port
// allocator of a node port the API server refused (PortRefused).
func (o *Operator) enqueueOnStatusChange(ctx context.Context) {
	w := o.sched.WatchValueStatus(ctx, ownsKey)
	defer w.Close()
	for st := range w.C() {
		if r, ok := refusedNodePort(st); ok {
			if err := o.loop.PushEventContext(ctx, r); err != nil && ctx.Err() == nil {
				o.log.WithError(err).WithField("webapp", r.App).Warn("webapp operator: could not tell the port allocator of a refused node port")
			}
		}
		if ns, name, ok := appOfKey(st.Key); ok {
			o.webapps.Enqueue(ns, name)
		}
	}
}
