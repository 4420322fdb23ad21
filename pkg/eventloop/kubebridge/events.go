package kubebridge

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/eventloop"
)

// State is the loop's own copy of the watched Kubernetes objects: resource
// (as named by the bridge, "group/version/Kind") to key ("namespace/name") to
// object. Handlers receive it in EventHandler.Resync and must treat it as
// read-only: the loop updates it as it processes events, so it never shows
// an object newer than the events processed so far.
type State map[string]map[string]runtime.Object

// Get returns the object of resource at key, or nil.
func (s State) Get(resource, key string) runtime.Object {
	return s[resource][key]
}

// Len returns the number of objects across resources.
func (s State) Len() int {
	n := 0
	for _, objs := range s {
		n += len(objs)
	}
	return n
}

// KubeStateChange is one object's change, pushed when the informer layer
// handles its key. Rapid changes to one key may arrive as one event (the
// work queue coalesces them); the last state always arrives. A change the
// loop's state has already overtaken (a resync re-read the caches after it
// was pushed) is superseded: it reaches no handler (see order.go).
type KubeStateChange struct {
	// Resource names the kind, "group/version/Kind" ("v1/ConfigMap" for
	// the core group).
	Resource string
	// Key is "namespace/name", or "name" for cluster-scoped objects.
	Key string
	// PrevValue is the object as the loop knew it before this event (nil
	// when it is new to the loop). The loop fills it in when it processes
	// the event, from its own state.
	PrevValue runtime.Object
	// NewValue is the object now, nil when it was deleted.
	NewValue runtime.Object

	from       *Bridge // nil for events the bridge did not push: never superseded
	pos        uint64  // the bridge's position of the cache read
	superseded bool
}

// GetName implements eventloop.Event.
func (ev *KubeStateChange) GetName() string { return "Kubernetes State Change" }

// String implements eventloop.Event.
func (ev *KubeStateChange) String() string {
	verb := "updated"
	switch {
	case ev.NewValue == nil:
		verb = "deleted"
	case ev.PrevValue == nil:
		verb = "created"
	}
	if ev.superseded {
		return fmt.Sprintf("Kubernetes State Change: %s %s: superseded by a newer snapshot, not handled", ev.Resource, ev.Key)
	}
	return fmt.Sprintf("Kubernetes State Change: %s %s %s", ev.Resource, ev.Key, verb)
}

// Superseded implements eventloop.SupersedableEvent: once the loop has
// applied the event, it reports whether a snapshot newer than the event
// had already replaced the loop's state, so the event changed nothing.
func (ev *KubeStateChange) Superseded() bool { return ev.superseded }

// Method implements eventloop.Event.
func (ev *KubeStateChange) Method() eventloop.EventMethodType { return eventloop.Update }

// IsBlocking implements eventloop.Event: the bridge never waits, so a slow
// loop back-pressures the informer side through a full queue instead.
func (ev *KubeStateChange) IsBlocking() bool { return false }

// Done implements eventloop.Event.
func (ev *KubeStateChange) Done(error) {}

// TransactionType implements eventloop.UpdateEvent.
func (ev *KubeStateChange) TransactionType() eventloop.UpdateTransactionType {
	return eventloop.BestEffort
}

// Direction implements eventloop.UpdateEvent: deletions visit the handlers
// backwards, so what was built last is torn down first.
func (ev *KubeStateChange) Direction() eventloop.UpdateDirectionType {
	if ev.NewValue == nil {
		return eventloop.Reverse
	}
	return eventloop.Forward
}

// ApplyState implements eventloop.StateCarrier: it records the previous
// value from the loop's state and updates that state, unless the state is
// already newer than the event.
func (ev *KubeStateChange) ApplyState(prev any) any {
	state, _ := prev.(State)
	if state == nil {
		state = State{}
	}
	objs := state[ev.Resource]
	ev.PrevValue = objs[ev.Key]
	if ev.from.overtaken(ev.pos) {
		ev.superseded = true
		return state
	}
	if ev.NewValue == nil {
		delete(objs, ev.Key)
		return state
	}
	if objs == nil {
		objs = map[string]runtime.Object{}
		state[ev.Resource] = objs
	}
	objs[ev.Key] = ev.NewValue
	return state
}

// KubeResync carries a snapshot of every registered kind, taken from the
// informer caches. The first one is the loop's startup resync; later ones
// come from POST /controller/resync and healing.
type KubeResync struct {
	// State is the snapshot; it becomes the loop's state, unless the loop's
	// state is already newer (a healing resync re-read the caches after
	// this snapshot was taken): then the handlers get that newer state.
	State State

	from  *Bridge // nil for events the bridge did not push: always applied
	pos   uint64  // the bridge's position of the snapshot
	stale bool    // the loop's state was newer; State was not applied
}

// GetName implements eventloop.Event.
func (ev *KubeResync) GetName() string { return "Kubernetes Resync" }

// String implements eventloop.Event; it lists the resources with their
// object counts.
func (ev *KubeResync) String() string {
	resources := make([]string, 0, len(ev.State))
	for r := range ev.State {
		resources = append(resources, r)
	}
	sort.Strings(resources)
	var b strings.Builder
	b.WriteString("Kubernetes Resync")
	for _, r := range resources {
		fmt.Fprintf(&b, "\n  %s: %d objects", r, len(ev.State[r]))
	}
	if ev.stale {
		b.WriteString("\n  (older than the loop's state, which was kept)")
	}
	return b.String()
}

// Method implements eventloop.Event.
func (ev *KubeResync) Method() eventloop.EventMethodType { return eventloop.FullResync }

// IsBlocking implements eventloop.Event.
func (ev *KubeResync) IsBlocking() bool { return false }

// Done implements eventloop.Event.
func (ev *KubeResync) Done(error) {}

// ApplyState implements eventloop.StateCarrier: a copy of the snapshot
// replaces the loop's state. A copy, because later changes update the
// loop's state in place, while the event itself must stay as it was: its
// String is read from the event history on other goroutines. A snapshot
// older than the loop's state leaves it as it is.
func (ev *KubeResync) ApplyState(prev any) any {
	if st, ok := prev.(State); ok && ev.from.overtaken(ev.pos) {
		ev.stale = true
		return st
	}
	if ev.from != nil {
		ev.from.applied.Store(ev.pos)
	}
	state := make(State, len(ev.State))
	for resource, objs := range ev.State {
		copied := make(map[string]runtime.Object, len(objs))
		for k, obj := range objs {
			copied[k] = obj
		}
		state[resource] = copied
	}
	return state
}
