// Package eventloop is Lariat's serialized event loop: the main event loop of
// Contiv/VPP, generalized for Kubernetes operators and fixed where the
// original misbehaved.
//
// # Why one loop
//
// Inputs arrive concurrently (Kubernetes watches, timers, API calls, external
// configuration), but most operators are easier to get right when their state
// changes one event at a time. A Loop runs a single goroutine that takes
// events from a bounded queue and hands each one to an ordered chain of
// EventHandlers. Handlers registered earlier see every event first, so a
// handler can read the state of the handlers before it knowing that they have
// already reacted to the event. Events with Direction Reverse (typically
// "undo" events) visit the handlers backwards.
//
// # One transaction per event
//
// Each event gets one transaction. Handlers Put, Get and Delete key-value
// pairs of desired configuration in it; when all handlers are done, the loop
// commits it once through a Committer (the KV scheduler, or a recording
// committer from package eventlooptest in tests). Update events commit only
// when they changed something; resync events always commit, because an empty
// resync means "nothing is desired any more".
//
// # Startup, follow-ups and failures
//
// The first event processed (sequence number 0) is the startup resync;
// anything pushed earlier waits for it and is replayed afterwards in arrival
// order. If it does not arrive before Config.StartupResyncDeadline the loop
// turns unhealthy and fails the waiting events.
//
// Handlers push follow-up events through the transaction they are given
// (ResyncOperations.PushFollowUp). Follow-ups overtake events already queued
// and are recorded as follow-ups of their parent.
//
// A handler error wrapped in FatalError aborts the loop: it turns unhealthy
// and every later event fails fast with ErrAborted. AbortEventError stops
// the processing of the one event, nothing is committed. Events of type
// RevertOnFailure have the handlers that completed Revert their changes in
// reverse order, and nothing is committed. Any other error (or a failed
// commit, or a failed resync) schedules an after-error healing resync, a full
// resync, after Config.DelayAfterErrorHealing; the delay doubles while errors
// keep coming, up to Config.MaxAfterErrorHealingDelay, and at most one
// healing is pending at a time. If that healing fails too, the loop aborts.
//
// # Producers
//
// PushEvent never blocks: it fails at once with ErrQueueFull or ErrClosed.
// PushEventContext waits for room until its context ends. An event accepted
// by either gets its Done called exactly once, whatever happens later
// (processed, failed fast, or dropped by Close with ErrClosed); an event
// rejected by them is never Done. Embed Result in an event type to let
// producers Wait for the outcome. Waiting from inside the loop (on a
// follow-up before its parent has finished, or with the context of a
// transaction) returns ErrWaitInLoop instead of deadlocking.
//
// # Observability
//
// Every event is logged in the boxed NEW EVENT / FINALIZED EVENT format of
// Contiv, at Config.EventLogLevel; the boxes are only built when that level is
// enabled. Processed events are recorded in a bounded History served over HTTP
// (see Loop.HTTPHandler), and counted in Prometheus metrics registered with
// the Registerer given in Options. The history keeps of each transaction a
// TxnSummary cut to MaxTxnSummaryBytes, never the committer's record or the
// transaction's values: those stay with the committer, within its own
// history bounds, reachable by the summary's sequence number.
//
// # Input state
//
// Events that implement StateCarrier update an opaque input state kept by the
// loop (for example a snapshot of Kubernetes objects, pushed by package
// kubebridge); handlers receive it in Resync. The loop keeps its own copy, so
// handlers see state consistent with the sequence of events they processed.
// Resyncs that bring no state of their own (healing, requested) ask
// Options.RefreshState for a fresh copy when it is set. Such a copy can be
// newer than updates still queued; an update that finds, when applied, that
// the state has overtaken it (SupersedableEvent) reaches no handler, so the
// state handlers see never goes back in time.
package eventloop
