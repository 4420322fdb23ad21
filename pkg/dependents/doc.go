// Package dependents keeps an owner's objects in dependency order, the way
// kro's resource graphs and the Java Operator SDK's dependent resources
// do, on Lariat's event loop and KV scheduler: the user writes a handler
// that returns the owner's desired objects (Of), each with what it waits
// for (After: ordering only; Requires; RequiresOwner: another owner's
// readiness), a readiness rule (ReadyWhen, DefaultReady otherwise) and
// whether it is wanted at all (IncludeWhen). Register runs the rest: a
// kubebridge feeding an event loop, a KV scheduler with the Kubernetes
// descriptor of each kind, and a status handler that says in the owner's
// condition what is ready, what waits and why, and what failed.
// Join does the same on an event loop and a KV scheduler the user already
// runs: it adds its handler to the loop's options before eventloop.New,
// and Joining.Start starts the status handler once the loop exists.
//
// Objects are created once what they wait for is ready, and deleted in
// reverse order. An ordering-only dependency (After) is kept when what it
// names goes or stops being ready; a Requires dependency takes the object
// down (it waits, PENDING) until it is back. Safety is the descriptor's:
// objects are applied server-side under Options.FieldManager, never taken
// over when another manager created them, and deleted only by the
// scheduler, which deletes nothing on the strength of a kind that has not
// synced (the bridge holds the loop's first resync until every kind has).
// Readiness is read from the informers, that is from the API server's view.
//
// See docs/dependents.md.
package dependents
