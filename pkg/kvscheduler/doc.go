// Package kvscheduler applies a desired set of key-value pairs to a
// southbound system through descriptors, resolving dependencies between the
// values and ordering the create, update and delete operations so that every
// value is only created once everything it depends on exists.
//
// It is the generalization of the VPP-Agent KV scheduler to plain Go values:
// values with unmet dependencies wait as PENDING, failed operations are
// retried with backoff, and resyncs reconcile the scheduler's view with the
// southbound. The package holds no package-level state: several schedulers
// can run in one process.
//
// # Model
//
// The scheduler keeps a graph of keys from one transaction to the next.
// Each key holds the value wanted for it (requested by the northbound,
// derived from its base, or notified by the southbound), the value the
// scheduler believes the southbound holds, and its state. A transaction
// walks only the values it sets and what they reach, in the reference's
// order:
//
//   - its values are taken sorted by key: deletes, then re-creates,
//     creates and updates;
//   - a value's change is applied depth first: its obsolete derived values
//     are deleted before it is updated; it is created or updated before its
//     new derived values, which follow it in key order; the values its
//     create made ready (PENDING dependents) are created right after it;
//   - a delete makes the value unavailable, deletes its derived values,
//     then the values that depend on it (into PENDING), then the value.
//
// A value is never deleted while a value that depends on it, or derives
// from it, still exists in the southbound (its delete failed): the delete
// fails, naming that value, and goes through as soon as it is gone (or with
// the retry). A cycle of values is created as a whole once its external
// dependencies are met; a cycle through a derived value is not, since a
// derived value exists only after its base.
//
// A failed operation blocks its value until the value changes, a resync,
// or its retry, which applies the last request of its base again with the
// retry options of the transaction that made it. After failures, the bases
// of the failed values are read back (one read per descriptor). A value
// whose delete failed counts as absent for its dependents until it is
// deleted or requested again.
//
// # Cost
//
// A transaction costs what it reaches: the values it sets, their derived
// values and the dependents whose dependencies they meet or unmet, each
// with a few map lookups (dependents are indexed by exact key and by
// any-of prefix; the keys an any-of selector matches are indexed when
// the dependency is computed, at the cost of one call of the selector per
// value in the graph). Statuses,
// value dumps and the history are updated for the keys it touched only.
// Resyncs read and walk everything, and a value waiting on values that
// wait themselves searches them for a cycle.
//
// # Concurrency
//
// Transactions, notifications, retries and registrations are queued and
// processed one at a time by one goroutine, which also calls the
// descriptors. Reading statuses, value dumps (DumpValues), metadata maps,
// history and past graph snapshots (GraphSnapshot) is safe from any goroutine, including descriptor callbacks;
// committing from a callback must use NonBlocking.
//
// The callbacks that talk to the southbound (Create, Update, Delete,
// Retrieve, RetrieveKeys) get a context: for a blocking Commit, one that
// ends with the Commit's ctx or when the scheduler closes; for work no
// caller waits for (NonBlocking transactions, retries, notifications,
// registrations), the scheduler's lifetime context (Scheduler.Context).
// When it ends, the callback in progress returns and fails its operation,
// and the transaction stops before its next one (see Txn.Commit).
//
// The scheduler does not import the event loop. The loopcommit subpackage
// adapts it to the event loop's Committer interface.
package kvscheduler
