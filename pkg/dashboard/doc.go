// Package dashboard serves a live, read-only dashboard of a Lariat operator
// in the browser, at /ui/ on the operator's own HTTP listener:
//
//   - the KV scheduler's value graph, every value a node coloured by its
//     state, with its dependencies and derivations as edges, PENDING and
//     FAILED values listed first with their reasons, a value's status, last
//     operations, timeline and (redacted) object on click, filters by key
//     prefix, descriptor and state, and grouping by owner or descriptor for
//     large graphs;
//   - the event loop's events and the scheduler's transactions live, over
//     Server-Sent Events;
//   - the controllers (queue depth, waiting and handling time, errors,
//     retries, fights, cached objects) from the operator's metrics;
//   - the replicas: the leader, or for a sharded replica (Options.Shard,
//     Options.ShardMember) its member, the elected sharder, the members
//     with the objects they hold, and the drains in flight;
//   - time travel: the graph after any retained transaction, from the
//     scheduler's graph snapshots.
//
// It reads the layers below through small interfaces (Scheduler,
// EventLoop, a prometheus.Gatherer, a Replicas function, Shard and
// ShardMember); nothing below imports it. The page's assets are embedded
// (go:embed): no CDN, no build step. The graph is laid out by the vendored @dagrejs/dagre and drawn as
// SVG, so keys are text.
//
// Safety: the dashboard has no write action but a resync request, and
// that only with Options.AllowResync; it serves on whatever listener
// the operator already has (localhost by default in the example). A
// browser never makes the loop or the scheduler wait: each stream client
// has a bounded buffer that drops its oldest messages, leaving a marker
// that says how many. Objects are shown redacted: a Secret's data never,
// nor anything but the name, namespace and labels of a kind the user marks
// (Options.RedactKinds, Options.RedactKeyPrefixes).
package dashboard
