// Package kvscheduler applies a desired set of key-value pairs to a
// southbound system through descriptors, resolving dependencies between the
// values and ordering the create, update and delete operations so that every
// value is only created once everything it depends on exists.
//
// It is the generalization of the VPP-Agent KV scheduler to plain Go values:
// transactions are simulated (planned) and then executed, values with unmet
// dependencies wait as PENDING, failed operations are retried with backoff,
// and resyncs reconcile the scheduler's view with the southbound. The package
// holds no package-level state: several schedulers can run in one process.
//
// # Model
//
// The scheduler keeps the desired values (last requested by the
// northbound), the actual values (what it believes exists in the
// southbound) and the failed operations. A transaction changes the desired
// values; the simulation then computes the target: the desired values that
// are valid, implemented and whose dependencies are met, with their derived
// values, plus everything the southbound owns. Dependencies are resolved as
// a greatest fixed point, so a cycle of values is created as a whole once
// its external dependencies are met. The plan is the difference between
// the target and the actual values: deletes (dependents first),
// re-creates, creates and updates (dependencies first). The simulation only
// references values; it never copies the graph.
//
// A failed operation refreshes its value (Retrieve) and blocks it: it is
// left as it is until its value changes, a resync, or its retry, which uses
// the retry options of the transaction that last set the value (or its
// base). Dependents of a value that failed to be created wait as PENDING.
// With best effort (the default), a failed delete of a derived value does
// not stop the deletion of its base; the derived value is FAILED until a
// retry or resync removes it.
//
// # Concurrency
//
// Transactions, notifications, retries and registrations are queued and
// processed one at a time by one goroutine, which also calls the
// descriptors. Reading statuses, value dumps (DumpValues), metadata maps,
// history and past graph snapshots (GraphSnapshot) is safe from any goroutine, including descriptor callbacks;
// committing from a callback must use NonBlocking.
//
// The scheduler does not import the event loop. The loopcommit subpackage
// adapts it to the event loop's Committer interface.
package kvscheduler
