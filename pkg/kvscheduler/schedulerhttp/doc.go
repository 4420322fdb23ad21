// Package schedulerhttp serves the REST introspection API of a KV scheduler
// (package kvscheduler), modelled on the VPP-Agent's /scheduler/ API:
//
//	GET  /scheduler/txn-history        recorded transactions (JSON or text log)
//	GET  /scheduler/key-timeline       the recorded events of one key
//	GET  /scheduler/status             value statuses, explaining PENDING values
//	GET  /scheduler/dump               values known to the scheduler
//	POST /scheduler/downstream-resync  commit a downstream resync
//	GET  /scheduler/graph              the value graph as DOT or SVG, now or at time=T
//	GET  /scheduler/graph-snapshot     the value statuses at a past point
//
// Each path serves the one method listed (GET includes HEAD); the paths are
// matched whole, so the API is mounted below a prefix with http.StripPrefix.
//
// The package only uses the scheduler's exported, concurrency-safe read
// API and its transactions, so it can be mounted on any server next to a
// running scheduler. Past statuses come from the scheduler's graph
// snapshots (kvscheduler.GraphSnapshot); what the exported API does not
// expose (past values) is reconstructed from the recorded transactions where
// possible and reported as not available otherwise; see the documentation
// of each endpoint.
//
// It is a debugging API for the operator's own engineers: /scheduler/dump
// and the records serve values and errors as the scheduler holds them,
// Secrets included, and nothing here is redacted. Serve it only where the
// operator's credentials would be safe (a loopback listener, or behind
// authentication); pkg/dashboard is the view that redacts.
package schedulerhttp
