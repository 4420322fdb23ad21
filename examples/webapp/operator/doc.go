// Package operator is the WebApp operator of Lariat's flagship example. It
// uses every layer of the framework:
//
//   - generated typed controllers for WebApp (demo.lariat.dev/v1) and the
//     built-in kinds it creates, sharing one factory and one informer per
//     kind;
//   - an event loop fed by the Kubernetes bridge, whose handlers run one
//     event at a time, in order, each adding to the event's transaction:
//     the inventory (what exists), the port allocator (unique node ports
//     across all WebApps, state that must not race), the configuration
//     renderer (ConfigMaps, including the URLs of dependencies), the
//     workload builder (Deployments, rolled when their configuration
//     changes) and the availability tracker (which WebApps others may
//     depend on, and repairs of objects changed behind the operator's back);
//   - a KV scheduler with the Kubernetes object descriptor, which applies
//     ConfigMap, Deployment and Service in dependency order, keeps a
//     WebApp's objects PENDING until the WebApps it depends on are
//     available, and deletes them when a WebApp goes;
//   - a status handler that reads the scheduler's view and reports
//     readiness and, for a waiting WebApp, what it waits for;
//   - the event-history, scheduler and Prometheus endpoints (Handler).
//
// # Readiness
//
// A WebApp is available once the API server shows its ConfigMap, Deployment
// and Service with the allocated node port and, with Options.WaitForPods,
// once the Deployment's controller reports all replicas available. Lariat's
// bundled control plane runs no controller manager and no kubelet, so there
// no pods ever run and WaitForPods must stay off.
//
// Once available, a WebApp stays a satisfied dependency while it exists
// and its own dependencies are available: an outage of its objects shows
// in its own Ready condition (and the objects are repaired), but does not
// tear down the WebApps that depend on it. Deleting a WebApp does, down the
// whole chain: every WebApp depending on it, directly or not, has its
// objects deleted and waits, PENDING, until it is back.
package operator
