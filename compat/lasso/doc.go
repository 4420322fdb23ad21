// Package lasso runs wrangler v3 and lasso code on Lariat's core: it shows
// Lariat's shared client, cache and controller factories through lasso's
// interfaces (client.SharedClientFactory, cache.SharedCacheFactory,
// controller.SharedControllerFactory, controller.SharedController) and
// builds lasso's *client.Client over Lariat's REST clients. A wrangler v3
// generated factory given
//
//	FactoryOptions{SharedControllerFactory: lasso.NewSharedControllerFactory(f)}
//
// runs its controllers on Lariat's priority queues, lean caches and
// backoff; handlers registered with wrangler's OnChange and OnRemove, its
// Enqueue and EnqueueAfter, caches and clients work unchanged. This is step
// 0 of a port: run the wrangler code on Lariat's core first, then port
// kind by kind. NewBridge adds Lariat's event loop (and with it the KV
// scheduler): Bridge.WatchController takes wrangler's generated
// controllers.
//
// # Differences from lasso
//
// lasso's ForResource and ForResourceKind, and its WaitForCacheSync, have
// no error. Their failures are kept: Start returns those of ForResource*
// joined with Lariat's *cache.SyncError, and SharedCacheFactory.SyncError
// returns the last WaitForCacheSync's. A kind that does not sync (its CRD
// is missing) does not hold up the others when Start is
// SharedControllerFactory.Start; wrangler's own Factory.Start stops at its
// Sync before starting any controller, as it does on lasso. StartGVK starts
// every informer not yet started, since Lariat starts informers
// factory-wide.
//
// # Why a module of its own
//
// This package lives in the Go module github.com/lariat-dev/lariat/compat/lasso
// (with `replace github.com/lariat-dev/lariat => ../..`), not in the main
// module, so that Lariat's users who do not use wrangler do not take on
// lasso's and wrangler's requirements. Measured on 2026-11-24 with
// wrangler v3.8.0 and lasso v0.2.10 (the only releases on k8s.io v0.37, the
// minor in Lariat's go.mod: wrangler v3.7.2 and lasso v0.2.9 are on v0.36,
// v3.6.1 and v0.2.7 on v0.35), by adding this package's imports (and, in a
// test, wrangler's generated core and apps controllers) to the main module:
//
//   - the main module's graph grew from 157 modules (710 go mod graph
//     edges) to 167 (870);
//   - a program that imports only pkg/controller went from 99 to 102
//     modules (lasso, wrangler, evanphx/json-patch) and had eight
//     golang.org/x modules raised (crypto, mod, net, sync, sys, term, text,
//     tools), since wrangler requires newer ones: every Lariat user would
//     take those upgrades;
//   - every wrangler and lasso release pins one k8s.io minor, so Lariat's
//     own k8s.io upgrades would wait for Rancher's releases.
//
// Module graph pruning keeps the first two small; the third decides it.
// make test and make verify run this module's tests and checks too.
package lasso

// Wrangler's own generator (pkg/controller-gen) writes the controllers of
// the custom kind the tests run (testdata/wrangler); the generator is a
// module of its own there, so its requirements stay out of this go.mod.
//go:generate go run -C testdata/wrangler/gen . ../../..
