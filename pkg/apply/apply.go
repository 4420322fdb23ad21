package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/client"
)

// Labels and annotations Apply puts on the objects it manages.
const (
	// LabelSet holds the hash of the set (owner and set ID); pruning lists
	// by it.
	LabelSet = "lariat.dev/set"
	// AnnotationOwner names the owner: "group/version/Kind namespace/name".
	AnnotationOwner = "lariat.dev/owner"
	// AnnotationSetID holds the set ID as given.
	AnnotationSetID = "lariat.dev/set-id"
	// AnnotationOwnerUID holds the UID of the owner the object was applied
	// for. An owner deleted and created again under the same name names
	// the same set, but is a different owner: pruning for one never
	// deletes what was applied for the other (see Set.OwnerKey).
	AnnotationOwnerUID = "lariat.dev/owner-uid"
	// LabelInventory marks a set's inventory ConfigMap with the set's hash;
	// it is not LabelSet, so the set's own pruning never sees it.
	LabelInventory = "lariat.dev/inventory"
	// inventoryKinds is the inventory ConfigMap's key listing the kinds.
	inventoryKinds = "kinds"
)

// ErrOwnerExists is returned (wrapped) by Apply and DryRun of a whole set
// named by Set.OwnerKey with no objects when the owner still exists on the
// API server and is not being deleted: an object of its name whose UID is
// the one the set's inventory records (or that records none); one with
// another UID is another owner, and the set is pruned (see
// confirmOwnerGone). Such a call means "the owner is
// gone, prune its children"; a cache filtered by label, field or namespace
// also loses objects that merely stopped matching, so the absence is
// confirmed with a live read before anything is deleted, and nothing is
// when the owner is still there. Callers reacting to a cache's delete event
// should treat this error as "nothing to do".
var ErrOwnerExists = errors.New("the owner still exists")

// Options configure an Applier.
type Options struct {
	// FieldManager owns the applied fields; required.
	FieldManager string
	// InventoryNamespace holds the inventory ConfigMaps of sets whose owner
	// is cluster-scoped or absent. Empty means "default"; an operator whose
	// RBAC covers only its own namespaces names one of them here.
	InventoryNamespace string
	// PruneNamespaces are the namespaces pruning may list in when a set's
	// inventory does not say where the objects of a namespaced kind are
	// (inventories written before Lariat recorded namespaces): for an
	// operator whose RBAC covers only these namespaces, like wrangler's
	// WithListerNamespace. Empty means all namespaces. Kinds whose
	// namespaces the inventory records are listed in those namespaces
	// only, whatever this says.
	PruneNamespaces []string
}

// Applier applies desired sets through a client factory. It is safe for
// concurrent use; each call names its own set.
type Applier struct {
	clients *client.SharedClientFactory
	opts    Options
}

// New returns an Applier; it fails without a field manager.
func New(clients *client.SharedClientFactory, opts Options) (*Applier, error) {
	if opts.FieldManager == "" {
		return nil, errors.New("apply: a field manager is required")
	}
	if opts.InventoryNamespace == "" {
		opts.InventoryNamespace = metav1.NamespaceDefault
	}
	opts.PruneNamespaces = slices.Clone(opts.PruneNamespaces)
	return &Applier{clients: clients, opts: opts}, nil
}

// Apply makes the set hold exactly objs: each is server-side applied (forcing
// ownership of the fields it sets), then objects of the set that are not in
// objs are deleted. Apply with no objects prunes the whole set and its
// inventory, which is what to do when the owner goes away; when the set is
// named by Set.OwnerKey (the owner object is no longer at hand), the owner's
// absence is first confirmed with the API server, and a live owner that is
// not being deleted keeps everything and gives ErrOwnerExists; a confirmed
// absence prunes the sets named in Set.TakeOver too. An object
// another set holds is not applied (a *ClaimedError), nor one that belongs
// to no set unless the set may adopt it (a *NotManagedError). An object
// changed by someone else between the set's read and its write gives an
// API Conflict: the next Apply reads and checks it again. Errors of single
// objects are joined; the rest of the set is still applied.
func (a *Applier) Apply(ctx context.Context, set Set, objs ...runtime.Object) error {
	_, err := a.run(ctx, set, objs, false)
	return err
}

// DryRun returns what Apply would do, computed with server-side dry-run
// applies, and writes nothing.
func (a *Applier) DryRun(ctx context.Context, set Set, objs ...runtime.Object) (Plan, error) {
	return a.run(ctx, set, objs, true)
}

// desired is one object of the set, ready to apply.
type desired struct {
	key    ObjectKey
	client *client.Client
	obj    *unstructured.Unstructured
	// ownerUID is the UID of the set's owner reference in obj, when
	// Apply added one and made it the controller reference.
	ownerUID types.UID
}

// runSet applies (or dry-runs) one set: see Apply.
func (a *Applier) runSet(ctx context.Context, set Set, objs []runtime.Object, dryRun bool) (Plan, error) {
	var plan Plan
	id, err := a.identify(set)
	if err != nil {
		return plan, err
	}
	if set.Owner == nil && set.OwnerKey != nil && len(objs) == 0 {
		if err := a.confirmOwnerGone(ctx, id, *set.OwnerKey); err != nil {
			return plan, err
		}
	}
	want, kinds, err := a.prepareAll(id, set, objs)
	if err != nil {
		// A set with an object that cannot even be prepared must not
		// prune: the object would look undesired.
		return plan, err
	}

	held, legacyInventories, read, err := a.readInventory(ctx, id)
	if err != nil {
		return plan, err
	}
	all := held.union(kinds)
	if !dryRun && len(want) > 0 {
		// Record new kinds before creating their objects, so a crash in
		// between cannot leave objects no inventory points at.
		if err := a.writeInventory(ctx, id, all); err != nil {
			return plan, err
		}
	}

	errs := a.applyAll(ctx, id, set, want, dryRun, &plan)
	errs = append(errs, a.pruneAll(ctx, id, set, all, want, kinds, dryRun, &plan)...)
	if len(errs) > 0 || dryRun {
		return plan, errors.Join(errs...)
	}
	return plan, a.settleInventory(ctx, id, kinds, legacyInventories, read)
}

// applyAll applies (or dry-runs) each object of want, recording in plan
// what changed; it returns the errors of the objects that failed.
func (a *Applier) applyAll(ctx context.Context, id *setIdentity, set Set, want []desired, dryRun bool, plan *Plan) []error {
	var errs []error
	for _, d := range want {
		change, err := a.applyOne(ctx, id, set, d, dryRun)
		if err != nil {
			errs = append(errs, fmt.Errorf("apply %s: %w", d.key, err))
			continue
		}
		switch change {
		case "create":
			plan.Create = append(plan.Create, d.key)
		case "update":
			plan.Update = append(plan.Update, d.key)
		case "recreate":
			plan.Recreate = append(plan.Recreate, d.key)
		default:
			plan.Unchanged = append(plan.Unchanged, d.key)
		}
	}
	return errs
}

// pruneAll prunes (or, on a dry run or for kinds the set may not delete,
// only lists) the objects of every kind in all that want does not hold,
// recording them in plan. Kinds and namespaces still holding kept objects
// are added to kinds, the inventory to write.
func (a *Applier) pruneAll(ctx context.Context, id *setIdentity, set Set, all inventory, want []desired, kinds inventory, dryRun bool, plan *Plan) []error {
	var errs []error
	keep := map[objectID]bool{}
	for _, d := range want {
		keep[idOf(d.key)] = true
	}
	for _, gk := range all.kinds() {
		noDelete := set.NoDelete || slices.Contains(set.NoDeleteKinds, gk)
		deleted, spared, err := a.prune(ctx, id, gk, all[gk], keep, dryRun || noDelete)
		// Objects of a newer owner of the same name, or of another
		// field manager, stay, and so does the inventory that points at
		// them.
		plan.Kept = append(plan.Kept, spared...)
		for _, k := range spared {
			kinds.add(gk, k.Namespace)
		}
		if noDelete {
			plan.Kept = append(plan.Kept, deleted...)
			// The kept objects still carry the set's label: the
			// inventory goes on pointing at them.
			for _, k := range deleted {
				kinds.add(gk, k.Namespace)
			}
		} else {
			plan.Delete = append(plan.Delete, deleted...)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// settleInventory, once the set is applied and pruned without error,
// deletes the legacy inventories and leaves the set's own inventory holding
// kinds, or deletes it when kinds is empty.
func (a *Applier) settleInventory(ctx context.Context, id *setIdentity, kinds inventory, legacyInventories []string, read map[string]metav1.Preconditions) error {
	for _, name := range legacyInventories {
		// Its kinds are in the new inventory (written above) or pruned.
		if err := a.deleteInventory(ctx, id.invNamespace, name, readAs(read, name)); err != nil {
			return err
		}
	}
	if len(kinds) == 0 {
		// Conditional on the version read: one rewritten since (by
		// an owner created again under the set's name) stays.
		name := inventoryName(id)
		return a.deleteInventory(ctx, id.invNamespace, name, readAs(read, name))
	}
	// Kinds and namespaces that no longer hold anything leave the
	// inventory.
	return a.writeInventory(ctx, id, kinds)
}
