package shard

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controller"
)

// ackAttempts bounds how often one pass re-reads and acknowledges again
// after conflicts; past it the key is retried with backoff.
const ackAttempts = 5

// memberGate is the controller.Gate of one sharded kind of a member. It
// runs in the worker that holds the key, so an acknowledgement happens
// while no handler of this member runs for the object, and every later
// pass sees, through it, that the object is no longer this member's.
type memberGate struct {
	m       *Member
	gvk     schema.GroupVersionKind
	clients *lazyClients
	handed  handedKeys
}

// Gate returns the controller.Gate of the sharded kind gvk for this member;
// its reads and acknowledgements go through Fence(cfg). FactoryOptions and
// ShardControllers set it; use it directly only to build controllers by
// hand (controller.Options.Gate).
func (m *Member) Gate(cfg *rest.Config, gvk schema.GroupVersionKind) controller.Gate {
	return &memberGate{m: m, gvk: gvk, clients: m.newLazyClients(cfg)}
}

// Admit decides one pass; see the package documentation and
// docs/replicas.md. A cached object is trusted for what it says about this
// member (the cache only moves forward), but its absence is never read as
// a deletion: a relabel away from this member and a relist after a broken
// watch both look like one to the cache, so an absent object is read from
// the API server first. The controller asks about an absent object only
// when this member held it (its cache had it, its handlers saw it, and no
// pass has since told them it is gone, nor been refused here): a NotFound
// is then this member's deletion to handle, and so is a live object of
// another UID than the one held (controller.AbsentUID: the handlers' or
// else the cache's): the object held went, and its name was taken again.
// A key queued on a member that never held the object (relatedresource
// from a kind outside the ring)
// reaches neither this gate nor the handlers, and an object that moved
// away is refused here once, which makes the member forget it.
func (g *memberGate) Admit(ctx context.Context, key string, obj runtime.Object) (bool, error) {
	if err := g.lingers(key); err != nil {
		return false, err
	}
	if obj != nil {
		o, err := meta.Accessor(obj)
		if err != nil {
			return false, fmt.Errorf("shard: %s %s: %w", g.gvk.Kind, key, err)
		}
		switch g.m.judge(o.GetLabels(), o.GetAnnotations()) {
		case notMine:
			// The cache lags behind a move; the event that takes the
			// object out of it is on its way.
			g.m.metrics.refuse(g.gvk, refusedNotMine)
			return false, nil
		case untrailed:
			// Labelled for this member by someone other than the
			// sharder: the member its trail names may still run it.
			g.m.metrics.refuse(g.gvk, refusedUntrailed)
			return false, nil
		case unclaimed:
			// No trail yet (created with the label, or assigned
			// before trails): the claim's update brings the next pass.
			g.m.metrics.refuse(g.gvk, refusedUnclaimed)
			return false, g.claim(ctx, key, o.GetResourceVersion())
		case draining:
			g.m.metrics.refuse(g.gvk, refusedDraining)
			return false, g.acknowledge(ctx, key, o.GetResourceVersion())
		}
		g.handed.forget(key) // mine (again): its deletion is mine
		g.m.metrics.admit(g.gvk)
		return true, nil
	}
	c, err := g.clients.forKind(g.gvk)
	if err != nil {
		return false, err
	}
	if rv, ok := g.handed.get(key); ok {
		// Handed over: its deletion is its next member's, unless it
		// went before the sharder assigned it to one.
		return g.handedGone(ctx, c, key, rv)
	}
	if rv := controller.CarriedDeletionAt(ctx); rv != "" {
		// An earlier term's deletion: was it one, or a move away?
		return g.carriedGone(ctx, c, key, rv)
	}
	if rv, held := controller.CarriedHeldSince(ctx); rv != "" {
		// An earlier term held it and never saw it go: did it go
		// while that term's?
		return g.carriedHeldGone(ctx, c, key, rv, controller.AbsentUID(ctx), held)
	}
	live, err := g.get(ctx, c, key)
	if apierrors.IsNotFound(err) {
		g.m.metrics.admit(g.gvk)
		return true, nil // deleted: the handlers see nil, as always
	}
	if err != nil {
		return false, err
	}
	if held := controller.AbsentUID(ctx); held != "" && live.GetUID() != held {
		// The object this member held was deleted, and another was
		// created under its name (for any member): a name is not an
		// object, and the one held is gone.
		g.m.metrics.admit(g.gvk)
		return true, nil
	}
	g.m.metrics.refuse(g.gvk, refusedUncached)
	// Moved away (not mine), or mine and not cached yet (the cache will
	// deliver it, and the next pass decides with it): either way not a
	// deletion, and nothing for the handlers now.
	return false, nil
}

// lingers returns a quiet retry while a handler of an earlier term of the
// member's Join still handles key's object: the pass waits until it
// returned (see lingering.go).
func (g *memberGate) lingers(key string) error {
	if g.m.lingering == nil || !g.m.lingering.anyElsewhere(g.m) {
		return nil // the usual case: no earlier term's handler runs
	}
	c, err := g.clients.forKind(g.gvk)
	if err != nil {
		return err
	}
	ns, name, err := toolscache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	gvr := c.GroupVersionResource()
	obj := controller.ObjectRef{Group: gvr.Group, Resource: gvr.Resource, Namespace: ns, Name: name}
	if !g.m.lingering.busyElsewhere(g.m, obj) {
		return nil
	}
	return controller.RetryQuietly(fmt.Errorf("shard: %s %s: a handler of an earlier term of this replica still handles it", g.gvk.Kind, key))
}

// acknowledge lets go of a draining object: it removes the assignment and
// drain labels, on the condition that the object is still the version the
// decision was made on (resourceVersion), so that it never removes an
// assignment written since (a direct reassignment by the sharder). On a
// conflict it reads the object again and decides again.
func (g *memberGate) acknowledge(ctx context.Context, key, resourceVersion string) error {
	c, err := g.clients.forKind(g.gvk)
	if err != nil {
		return err
	}
	ns, name, err := toolscache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	patch, err := g.m.ackPatch(resourceVersion)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		acked := &unstructured.Unstructured{}
		err := c.Patch(ctx, ns, name, types.MergePatchType, patch, acked, metav1.PatchOptions{})
		if err == nil {
			g.handed.set(key, acked.GetResourceVersion())
			g.m.metrics.acknowledged(g.gvk)
		}
		switch {
		case err == nil, apierrors.IsNotFound(err):
			// Acknowledged, or deleted (the cache delivers the
			// deletion, and the next pass confirms it).
			return nil
		case !apierrors.IsConflict(err):
			return fmt.Errorf("shard: acknowledge the drain of %s %s: %w", g.gvk.Kind, key, err)
		case attempt >= ackAttempts:
			return err // a conflict: retried quietly with backoff
		}
		live, err := g.get(ctx, c, key)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if g.m.judge(live.GetLabels(), live.GetAnnotations()) != draining {
			// Reassigned, or the move was called off: nothing to
			// acknowledge; a move off brings an update through the cache.
			return nil
		}
		if patch, err = g.m.ackPatch(live.GetResourceVersion()); err != nil {
			return err
		}
	}
}

// ackPatch is the merge patch that acknowledges a drain: both labels go
// and the trail records the release, on the condition that the object is
// still at resourceVersion. The trail, not the labels' absence, is the
// acknowledgement: a user's write can drop labels too.
func (m *Member) ackPatch(resourceVersion string) ([]byte, error) {
	return ackPatch(m.ring.Name, m.id, resourceVersion)
}

func ackPatch(ring, id, resourceVersion string) ([]byte, error) {
	return json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": resourceVersion,
		"labels": map[string]any{
			AssignmentLabel(ring): nil,
			DrainLabel(ring):      nil,
		},
		"annotations": map[string]any{TrailAnnotation(ring): releasedTrail(id, resourceVersion)},
	}})
}

// claim writes this member's ID into the trail of an object labelled for
// it that has none, on the condition that it is still the version judged.
// A conflict or a deletion ends the pass quietly: the cache delivers what
// changed, and the next pass judges that.
func (g *memberGate) claim(ctx context.Context, key, resourceVersion string) error {
	c, err := g.clients.forKind(g.gvk)
	if err != nil {
		return err
	}
	ns, name, err := toolscache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": resourceVersion,
		"annotations":     map[string]any{TrailAnnotation(g.m.ring.Name): g.m.id},
	}})
	if err != nil {
		return err
	}
	err = c.Patch(ctx, ns, name, types.MergePatchType, patch, &unstructured.Unstructured{}, metav1.PatchOptions{})
	if err == nil || apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("shard: claim %s %s: %w", g.gvk.Kind, key, err)
}

func (g *memberGate) get(ctx context.Context, c *client.Client, key string) (*unstructured.Unstructured, error) {
	ns, name, err := toolscache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(g.gvk)
	if err := c.Get(ctx, ns, name, u, metav1.GetOptions{}); err != nil {
		return nil, err
	}
	return u, nil
}

type verdict int

const (
	notMine verdict = iota
	mine
	draining
	unclaimed // labelled for this member, no trail yet: claim it first
	untrailed // labelled for this member, the trail names another or a release
)

// decide reads an object's labels: assigned to another member or to none
// is not mine; mine with the drain label set (to any value: only the
// sharder sets it, and reading more into it could keep two writers) is
// draining.
func (m *Member) decide(labels map[string]string) verdict {
	if labels[AssignmentLabel(m.ring.Name)] != m.id {
		return notMine
	}
	if _, ok := labels[DrainLabel(m.ring.Name)]; ok {
		return draining
	}
	return mine
}

// judge reads an object's labels and trail: labelled for this member, it
// is this member's (mine or draining) only when the trail names it too. A
// label the trail does not back was written outside the protocol, and the
// member the trail names (or none, after a release) may run the object.
func (m *Member) judge(labels, annotations map[string]string) verdict {
	v := m.decide(labels)
	if v == notMine {
		return notMine
	}
	tr, ok := annotations[TrailAnnotation(m.ring.Name)]
	switch {
	case !ok:
		return unclaimed
	case tr != m.id:
		return untrailed
	}
	return v
}

// lazyClients builds the gate's client factory on first use, so that
// configuring a factory needs no request and cannot fail; a failure is
// retried on the next pass.
type lazyClients struct {
	cfg *rest.Config
	mu  sync.Mutex
	f   *client.SharedClientFactory
}

func (m *Member) newLazyClients(cfg *rest.Config) *lazyClients {
	return &lazyClients{cfg: m.Fence(cfg)}
}

func (l *lazyClients) forKind(gvk schema.GroupVersionKind) (*client.Client, error) {
	l.mu.Lock()
	if l.f == nil {
		// An empty scheme: every object is read as unstructured, since
		// the gate only looks at labels and versions.
		f, err := client.NewSharedClientFactory(l.cfg, &client.SharedClientFactoryOptions{Scheme: runtime.NewScheme()})
		if err != nil {
			l.mu.Unlock()
			return nil, fmt.Errorf("shard: gate client: %w", err)
		}
		l.f = f
	}
	f := l.f
	l.mu.Unlock()
	return f.ForKind(gvk)
}
