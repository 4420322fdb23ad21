package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

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
	want := make([]desired, 0, len(objs))
	kinds := inventory{}
	var errs []error
	for _, obj := range objs {
		d, err := a.prepare(id, set, obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		want = append(want, d)
		kinds.add(d.key.GVK.GroupKind(), d.key.Namespace)
	}
	if len(errs) > 0 {
		// A set with an object that cannot even be prepared must not
		// prune: the object would look undesired.
		return plan, errors.Join(errs...)
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
	if len(errs) > 0 || dryRun {
		return plan, errors.Join(errs...)
	}
	for _, name := range legacyInventories {
		// Its kinds are in the new inventory (written above) or pruned.
		if err := a.deleteInventory(ctx, id.invNamespace, name, readAs(read, name)); err != nil {
			return plan, err
		}
	}
	if len(kinds) == 0 {
		// Conditional on the version read: one rewritten since (by
		// an owner created again under the set's name) stays.
		name := inventoryName(id)
		return plan, a.deleteInventory(ctx, id.invNamespace, name, readAs(read, name))
	}
	// Kinds and namespaces that no longer hold anything leave the
	// inventory.
	return plan, a.writeInventory(ctx, id, kinds)
}

// prepare turns obj into an apply body carrying the set's label, annotations
// and owner reference.
func (a *Applier) prepare(id *setIdentity, set Set, obj runtime.Object) (desired, error) {
	gvk, err := a.clients.GVKForObject(obj)
	if err != nil {
		return desired{}, fmt.Errorf("apply: %w", err)
	}
	c, err := a.clients.ForKind(gvk)
	if err != nil {
		return desired{}, fmt.Errorf("apply: %w", err)
	}
	u, err := toUnstructured(obj)
	if err != nil {
		return desired{}, fmt.Errorf("apply: %s: %w", gvk.Kind, err)
	}
	u.SetGroupVersionKind(gvk)
	u.SetResourceVersion("")
	u.SetManagedFields(nil)
	if u.GetName() == "" {
		return desired{}, fmt.Errorf("apply: a %s has no name", gvk.Kind)
	}
	if c.Namespaced() && u.GetNamespace() == "" {
		if id.owner == nil || id.owner.GetNamespace() == "" {
			return desired{}, fmt.Errorf("apply: %s %s has no namespace and no namespaced owner to take it from", gvk.Kind, u.GetName())
		}
		u.SetNamespace(id.owner.GetNamespace())
	}
	if !c.Namespaced() {
		u.SetNamespace("")
	}
	if id.owner != nil && id.owner.GetNamespace() != "" {
		if !c.Namespaced() && set.ClusterScopedRefused {
			return desired{}, fmt.Errorf("apply: cluster-scoped %s %s of namespaced owner %s refused (allow cluster-scoped children to apply it)", gvk.Kind, u.GetName(), id.ownerDesc)
		}
		if c.Namespaced() && u.GetNamespace() != id.owner.GetNamespace() && set.OwnerNamespaceOnly {
			return desired{}, fmt.Errorf("apply: %s %s/%s is outside the namespace of its owner %s (allow cross-namespace children to apply it)", gvk.Kind, u.GetNamespace(), u.GetName(), id.ownerDesc)
		}
	}
	var d desired
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelSet] = id.hash
	u.SetLabels(labels)
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationSetID] = id.id
	if id.owner != nil {
		annotations[AnnotationOwner] = id.ownerDesc
		if id.ownerUID != "" {
			annotations[AnnotationOwnerUID] = string(id.ownerUID)
		}
		// Kubernetes only honours owner references to cluster-scoped
		// owners or owners in the object's own namespace.
		// The set's reference joins the ones the object carries (the
		// caller meant those too), replacing one with the same UID.
		if !set.NoOwnerReference && id.owner.GetUID() != "" && (id.ownerScoped || id.owner.GetNamespace() == u.GetNamespace()) {
			refs := slices.DeleteFunc(u.GetOwnerReferences(), func(ref metav1.OwnerReference) bool {
				return ref.UID == id.owner.GetUID()
			})
			ref := metav1.OwnerReference{
				APIVersion: id.ownerGVK.GroupVersion().String(),
				Kind:       id.ownerGVK.Kind,
				Name:       id.owner.GetName(),
				UID:        id.owner.GetUID(),
			}
			// The owner controls the object (metav1.GetControllerOf
			// finds it) unless the caller named another controller;
			// applyOne also yields to one set on the live object.
			if !slices.ContainsFunc(refs, isController) {
				ref.Controller = ptr.To(true)
				d.ownerUID = ref.UID
			}
			u.SetOwnerReferences(append(refs, ref))
		}
	}
	u.SetAnnotations(annotations)
	d.key = ObjectKey{GVK: gvk, Namespace: u.GetNamespace(), Name: u.GetName()}
	d.client, d.obj = c, u
	return d, nil
}

func isController(ref metav1.OwnerReference) bool { return ref.Controller != nil && *ref.Controller }

// applyOne applies one object (or dry-runs it) and says what changed.
func (a *Applier) applyOne(ctx context.Context, id *setIdentity, set Set, d desired, dryRun bool) (string, error) {
	// The kind's client decodes into its Go type (or unstructured for
	// kinds outside the scheme), so results are read through accessors.
	before, _, err := a.clients.NewObjects(d.key.GVK)
	if err != nil {
		return "", err
	}
	after := before.DeepCopyObject()
	err = d.client.Get(ctx, d.key.Namespace, d.key.Name, before, metav1.GetOptions{})
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return "", err
	}
	if exists {
		// Another set's object stays that set's, and one that belongs
		// to no set stays its manager's: applying it would drop what
		// only the other set applied (one field manager applies every
		// set), or take over fields someone else set, and let this
		// set's pruning delete it.
		if err := id.claimed(d.key, before); err != nil {
			return "", err
		}
	}
	body, err := a.applyBody(d, before, exists)
	if err != nil {
		return "", err
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: a.opts.FieldManager, Force: &force}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if err := d.client.Patch(ctx, d.key.Namespace, d.key.Name, types.ApplyPatchType, body, after, opts); err != nil {
		if !exists {
			return "", a.createFailed(ctx, id, d, err)
		}
		// Only the set's own object is recreated: one it is adopting
		// (no set's label yet) is still someone else's, not to be
		// deleted.
		if !mayRecreate(set, d.key.GVK.GroupKind(), err) || !inASet(before) {
			return "", err
		}
		if dryRun {
			return "recreate", nil
		}
		return "recreate", a.recreate(ctx, id, d, before, after, opts, err)
	}
	if !exists {
		return "create", nil
	}
	if dryRun {
		if sameContent(before, after) {
			return "unchanged", nil
		}
		return "update", nil
	}
	if resourceVersion(before) != resourceVersion(after) {
		return "update", nil
	}
	return "unchanged", nil
}

// inASet reports whether obj carries a set's label; for an object claimed
// passed, the set's own or one it takes over.
func inASet(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetLabels()[LabelSet] != ""
}

func resourceVersion(obj runtime.Object) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetResourceVersion()
	}
	return ""
}

// sameContent compares what a dry run would store with what is stored,
// ignoring the fields the server moves on every write.
func sameContent(a, b runtime.Object) bool {
	strip := func(obj runtime.Object) ([]byte, error) {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetManagedFields(nil)
		u.SetResourceVersion("")
		u.SetGeneration(0)
		return json.Marshal(u.Object)
	}
	ja, errA := strip(a)
	jb, errB := strip(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.DeepCopy(), nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	// Typed objects carry zero values the apply would claim ownership of.
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	return u, nil
}
