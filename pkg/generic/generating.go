package generic

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/condition"
)

// GeneratingHandlerOptions configure RegisterGeneratingHandler. The names
// follow wrangler's generic.GeneratingHandlerOptions, so a port keeps them.
type GeneratingHandlerOptions struct {
	// DryRun computes what would be created, updated and deleted without
	// writing any child, and hands the plan to Plan: for trying a handler
	// out against a live cluster. The owner's status is still written.
	DryRun bool
	// Plan receives the plans of a DryRun handler.
	Plan func(key string, plan apply.Plan)
	// NoOwnerReference writes no owner reference to the children, so the
	// garbage collector leaves them when the owner goes. The handler
	// still prunes them when the owner is deleted (and while it lives,
	// when they leave its result): the set's inventory, not the owner
	// reference, is what finds them. Add NoDelete to Set to keep them.
	NoOwnerReference bool
	// AllowCrossNamespace lets a namespaced owner have children in other
	// namespaces. They get no owner reference (Kubernetes does not allow
	// one across namespaces); they are pruned through the set's
	// inventory. Without it such a child fails the handler.
	AllowCrossNamespace bool
	// AllowClusterScoped lets a namespaced owner have cluster-scoped
	// children, under the same terms as AllowCrossNamespace. The set's
	// inventory lives in the owner's namespace: deleting that namespace
	// before the owner's handler ran leaves such children behind.
	AllowClusterScoped bool
	// UniqueApplyForResourceVersion applies the children only when the
	// owner's resourceVersion differs from the one last applied
	// successfully: handlers that are costly to apply skip the resyncs and
	// re-enqueues of an unchanged owner. The handler still runs and its
	// status is still written; children changed by others are not
	// restored until the owner changes.
	UniqueApplyForResourceVersion bool
	// Set carries the apply options of every set the handler applies.
	Set SetOptions
}

// SetOptions are the apply.Set options a generating handler passes on to
// each set it applies. It is not apply.Set itself: the handler names the
// set (owner and ID), and the owner-reference and scope options are
// wrangler's flags above, so each option has a single place to be set and
// none is silently overwritten by another.
type SetOptions struct {
	// NoDelete keeps children that leave the set (apply.Set.NoDelete).
	NoDelete bool
	// NoDeleteKinds keeps children of these kinds that leave the set
	// (apply.Set.NoDeleteKinds).
	NoDeleteKinds []schema.GroupKind
	// RecreateKinds deletes and creates again children of these kinds
	// whose apply the server rejects for immutable fields
	// (apply.Set.RecreateKinds).
	RecreateKinds []schema.GroupKind
	// RecreateImmutable does so for children of any kind
	// (apply.Set.RecreateImmutable).
	RecreateImmutable bool
	// TakeOver names the handlers (set IDs) of the same owner whose
	// children this handler may take when it returns them
	// (apply.Set.TakeOver): for renaming a handler. A child of any other
	// set fails the handler with an *apply.ClaimedError and stays as it is.
	// What the old sets hold and this handler does not return stays while
	// the owner lives, and is pruned, with their inventories, when the
	// owner is deleted.
	TakeOver []string
	// Adopt lets the handler take over existing children of any kind
	// that belong to no set (made by hand or by another tool), and
	// AdoptKinds those of the listed kinds (apply.Set.Adopt and
	// AdoptKinds). Without them such a child is taken over only when its
	// user labelled it apply.LabelAdopt=true; any other fails the
	// handler with an *apply.NotManagedError (in cond, and retried with
	// backoff, so that labelling the child is picked up) and is left as
	// it is, while the rest of the children are applied. Wrangler adopts
	// them silently; this is the opt-in for ports that relied on it.
	Adopt      bool
	AdoptKinds []schema.GroupKind
}

// RegisterGeneratingHandler runs handler for every change of the kind until
// ctx ends and makes the children it returns exist exactly as returned,
// through applier (server-side apply, owner references where legal, pruning
// of children no longer returned, including whole kinds). The set of
// children is named after the handler, so two generating handlers of one
// owner do not prune each other's. When the owner is deleted its children are
// pruned; an owner that only left a filtered cache (label, field or
// namespace) keeps them, and so does an owner created again under the same
// name: children record their owner's UID, and the deletion pass of the
// old owner, however late, leaves the new owner's children alone. cond (when not empty) reflects the handler's and the apply's
// error; the status is written as by RegisterStatusHandler. When the apply
// fails, the handler's status is dropped too, as when the handler fails: it
// was computed before the apply and may describe children that do not exist
// as described, so the stored status stays, with cond False. A child that
// exists without belonging to any set (made by hand or by another tool) is
// not taken over unless SetOptions.Adopt or AdoptKinds say so (or the child
// is labelled apply.LabelAdopt=true): cond carries the
// *apply.NotManagedError, the other children are applied, and the key is
// retried with backoff.
func RegisterGeneratingHandler[T RuntimeMetaObject, S any](ctx context.Context, c StatusController[T], applier *apply.Applier, access StatusAccess[T, S], cond condition.Cond, name string, handler GeneratingHandler[T, S], opts *GeneratingHandlerOptions) {
	if opts == nil {
		opts = &GeneratingHandlerOptions{}
	}
	gvk := c.GroupVersionKind()
	template := apply.Set{
		ID:                   name,
		NoDelete:             opts.Set.NoDelete,
		NoDeleteKinds:        slices.Clone(opts.Set.NoDeleteKinds),
		NoOwnerReference:     opts.NoOwnerReference,
		RecreateKinds:        slices.Clone(opts.Set.RecreateKinds),
		RecreateImmutable:    opts.Set.RecreateImmutable,
		TakeOver:             slices.Clone(opts.Set.TakeOver),
		Adopt:                opts.Set.Adopt,
		AdoptKinds:           slices.Clone(opts.Set.AdoptKinds),
		OwnerNamespaceOnly:   !opts.AllowCrossNamespace,
		ClusterScopedRefused: !opts.AllowClusterScoped,
	}
	newSet := func() apply.Set { return template }
	applied := appliedVersions{versions: map[string]string{}}
	run := func(key string, set apply.Set, objs []runtime.Object) error {
		if !opts.DryRun {
			return applier.Apply(ctx, set, objs...)
		}
		plan, err := applier.DryRun(ctx, set, objs...)
		if opts.Plan != nil {
			opts.Plan(key, plan)
		}
		return err
	}
	c.OnChange(ctx, name, func(key string, obj T) (T, error) {
		var zero T
		if obj == zero {
			applied.forget(key)
			namespace, objName, err := cache.SplitMetaNamespaceKey(key)
			if err != nil {
				return zero, err
			}
			// Gone from the cache is not gone from the cluster when
			// the cache is filtered: the applier confirms with the
			// API server before pruning, and an owner that merely
			// stopped matching leaves nothing to do.
			set := newSet()
			set.OwnerKey = &apply.ObjectKey{GVK: gvk, Namespace: namespace, Name: objName}
			err = run(key, set, nil)
			if errors.Is(err, apply.ErrOwnerExists) {
				return zero, nil
			}
			return zero, err
		}
		if obj.GetDeletionTimestamp() != nil {
			return zero, nil // children go when it is gone
		}
		copied, err := deepCopy(obj)
		if err != nil {
			return zero, fmt.Errorf("generating handler %s: %w", name, err)
		}
		children, status, err := handler(copied, access.Get(copied))
		rv := obj.GetResourceVersion()
		if err == nil && !(opts.UniqueApplyForResourceVersion && applied.same(key, rv)) {
			set := newSet()
			set.Owner = copied
			err = run(key, set, children)
			if err == nil && opts.UniqueApplyForResourceVersion && !opts.DryRun {
				applied.store(key, rv)
			}
		}
		return saveStatus(ctx, c, access, cond, obj, copied, status, err)
	})
}

// appliedVersions remembers, per owner key, the resourceVersion whose
// children were last applied successfully.
type appliedVersions struct {
	mu       sync.Mutex
	versions map[string]string
}

func (v *appliedVersions) same(key, rv string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	last, ok := v.versions[key]
	return ok && last == rv
}

func (v *appliedVersions) store(key, rv string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.versions[key] = rv
}

func (v *appliedVersions) forget(key string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.versions, key)
}
