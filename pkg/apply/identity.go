package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/client"
)

// confirmOwnerGone reads the owner from the API server, through its kind's
// preferred version, and fails with ErrOwnerExists when it is there and not
// being deleted: only then may a whole set be pruned on the owner's account.
// An owner is identified by UID as well as name: a live object of the
// owner's name whose UID is not the one the set's inventory was last
// written for is another owner (the set's was deleted and its name taken
// again, perhaps by an object a filtered cache never shows), and the set
// is pruned. That prune still spares what was applied for the live owner,
// or for no recorded owner (see ownerCheck). An inventory that records no
// owner (none, or written before UIDs were recorded) cannot tell the two
// apart: the live object is taken for the set's owner, and nothing goes.
func (a *Applier) confirmOwnerGone(ctx context.Context, id *setIdentity, key ObjectKey) error {
	live, err := a.liveOwnerUID(ctx, id.ownerID)
	if err != nil {
		return fmt.Errorf("apply: confirm owner %s is gone: %w", key, err)
	}
	if live == "" {
		return nil
	}
	// Read after the owner: an inventory rewritten for the live owner
	// since it was created records its UID by now.
	recorded, err := a.recordedOwnerUID(ctx, id)
	if err != nil {
		return fmt.Errorf("apply: confirm owner %s is gone: %w", key, err)
	}
	if recorded != "" && recorded != live {
		return nil
	}
	return fmt.Errorf("apply: set %q of %s not pruned: %w", id.id, key, ErrOwnerExists)
}

// liveOwnerUID reads the owner named by owner from the API server, through
// its kind's preferred version, and returns its UID while it exists and is
// not being deleted, or "" when there is no such owner. Only the server's
// NotFound for the owner itself says it is gone: a NotFound for the whole
// resource means the mapping is stale (the version read through is no
// longer served), so discovery is re-read for the kind and the owner read
// again, once, as listSet does; a resource that still answers so is an
// error, never the owner's absence.
func (a *Applier) liveOwnerUID(ctx context.Context, owner objectID) (types.UID, error) {
	for retried := false; ; retried = true {
		c, err := a.clients.ForKind(owner.gk.WithVersion(""))
		if meta.IsNoMatchError(err) {
			// The owner's kind is no longer served, so no owner is
			// left; unless discovery of its group failed.
			return "", a.confirmNotServed(ctx, owner.gk)
		}
		if err != nil {
			return "", err
		}
		uid, err := a.readOwner(ctx, c, owner)
		if err == nil || !apierrors.IsNotFound(err) {
			return uid, err
		}
		if retried || !a.clients.Rediscover(owner.gk) {
			return "", fmt.Errorf("read owner through %s, which answers NotFound for the resource: %w", c.GroupVersionResource(), err)
		}
	}
}

// readOwner reads owner through c and returns its UID while it exists and
// is not being deleted, "" when the server says it is not found, and the
// NotFound error when the server says so of the resource rather than of
// the owner.
func (a *Applier) readOwner(ctx context.Context, c *client.Client, owner objectID) (types.UID, error) {
	obj, _, err := a.clients.NewObjects(c.GroupVersionKind())
	if err != nil {
		return "", err
	}
	err = c.Get(ctx, owner.namespace, owner.name, obj, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && objectNotFound(err, c.GroupVersionResource(), owner.name) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", err
	}
	if m.GetDeletionTimestamp() != nil {
		return "", nil
	}
	return m.GetUID(), nil
}

// objectNotFound reports whether err, a NotFound, is the API server's
// answer that the object name of gvr does not exist: a Status naming that
// resource and name. A path the server does not serve (a version no longer
// served, a deleted CRD) answers a bare 404, which client-go turns into a
// NotFound carrying an UnexpectedServerResponse cause, or a Status that
// names no object.
func objectNotFound(err error, gvr schema.GroupVersionResource, name string) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || apierrors.IsUnexpectedServerError(err) {
		return false
	}
	d := status.Status().Details
	return d != nil && d.Name == name && d.Group == gvr.Group && d.Kind == gvr.Resource
}

// setIdentity is everything derived from a Set.
type setIdentity struct {
	hash string
	// legacyHashes are the hashes sets with an owner had before the hash
	// left the owner's version out: one per version the owner may have
	// been read through, the version at hand first (see legacyOwnerDescs).
	legacyHashes []string
	owner        metav1.Object
	ownerGVK     schema.GroupVersionKind
	ownerScoped  bool // the owner is cluster-scoped
	ownerDesc    string
	id           string
	invNamespace string
	// ownerUID is the UID of Set.Owner: the incarnation of the owner this
	// Apply acts for ("" when the set is named by OwnerKey, whose owner
	// is gone, or is ownerless).
	ownerUID types.UID
	// ownerID is the owner's identity (zero for an ownerless set), and
	// takeOver holds the IDs of the sets named in Set.TakeOver and
	// takeOverHashes their hashes (and legacy hashes), whose objects
	// this set may take.
	ownerID        objectID
	takeOver       []string
	takeOverHashes map[string]bool
	// adopt and adoptKinds are Set.Adopt and Set.AdoptKinds.
	adopt      bool
	adoptKinds []schema.GroupKind
}

func (a *Applier) identify(set Set) (*setIdentity, error) {
	id := &setIdentity{id: set.ID, invNamespace: a.opts.InventoryNamespace}
	var ownerID objectID
	var ownerGVK schema.GroupVersionKind // the version the owner is at hand in
	if set.Owner != nil {
		m, err := meta.Accessor(set.Owner)
		if err != nil {
			return nil, fmt.Errorf("apply: owner: %w", err)
		}
		gvk, err := a.clients.GVKForObject(set.Owner)
		if err != nil {
			return nil, fmt.Errorf("apply: owner: %w", err)
		}
		c, err := a.clients.ForKind(gvk)
		if err != nil {
			return nil, fmt.Errorf("apply: owner: %w", err)
		}
		id.owner, id.ownerGVK, id.ownerScoped = m, gvk, !c.Namespaced()
		ownerGVK = gvk
		id.ownerUID = m.GetUID()
		ownerID = objectID{gk: gvk.GroupKind(), namespace: m.GetNamespace(), name: m.GetName()}
		id.ownerDesc = ownerID.describe(gvk.Version)
		if m.GetNamespace() != "" {
			id.invNamespace = m.GetNamespace()
		}
	} else if k := set.OwnerKey; k != nil {
		ownerID, ownerGVK = idOf(*k), k.GVK
		id.ownerDesc = ownerID.describe(k.GVK.Version)
		if k.Namespace != "" {
			id.invNamespace = k.Namespace
		}
	} else if set.ID == "" {
		return nil, errors.New("apply: a set needs an owner or an ID")
	}
	// The hash leaves the owner's version out: an owner read through
	// another version is the same owner and must name the same set.
	var hashed string
	var legacyDescs []string
	if ownerID != (objectID{}) {
		hashed = ownerID.hashInput()
		// Sets written before hashed the owner with the version it was
		// read through; Apply takes them over (see readInventory).
		legacyDescs = a.legacyOwnerDescs(ownerID, ownerGVK.Version)
		for _, desc := range legacyDescs {
			id.legacyHashes = append(id.legacyHashes, setHash(desc, set.ID))
		}
	}
	id.hash = setHash(hashed, set.ID)
	id.ownerID, id.takeOver = ownerID, set.TakeOver
	id.adopt, id.adoptKinds = set.Adopt, set.AdoptKinds
	for _, other := range set.TakeOver {
		if id.takeOverHashes == nil {
			id.takeOverHashes = map[string]bool{}
		}
		id.takeOverHashes[setHash(hashed, other)] = true
		for _, desc := range legacyDescs {
			id.takeOverHashes[setHash(desc, other)] = true
		}
	}
	return id, nil
}

// hashInput is what a set's hash says of its owner: group, kind, namespace
// and name, not the version.
func (o objectID) hashInput() string {
	return fmt.Sprintf("%s/%s %s/%s", o.gk.Group, o.gk.Kind, o.namespace, o.name)
}

func setHash(ownerDesc, setID string) string {
	sum := sha256.Sum256([]byte(ownerDesc + "\x00" + setID))
	return hex.EncodeToString(sum[:])[:40]
}

// selector selects the set's objects: those labelled with its hash, and
// with its legacy hashes, so objects written before the hash left the
// owner's version out are pruned or taken over rather than orphaned. (A
// legacy hash cannot equal another set's hash: their inputs differ in
// shape.)
func (id *setIdentity) selector() string {
	if len(id.legacyHashes) == 0 {
		return LabelSet + "=" + id.hash
	}
	return fmt.Sprintf("%s in (%s,%s)", LabelSet, id.hash, strings.Join(id.legacyHashes, ","))
}

// labelledBy reports whether hash, an object's LabelSet label, is one the
// set's selector selects.
func (id *setIdentity) labelledBy(hash string) bool {
	return hash != "" && (hash == id.hash || slices.Contains(id.legacyHashes, hash))
}

// legacyOwnerDescs returns the owner descriptions ("group/version/Kind
// namespace/name", AnnotationOwner's form) that sets of owner were hashed
// with before the hash left the version out: the version at hand first,
// then every other version the mapper knows for the owner's kind, since the
// older Lariat may have read the owner through any of them. A kind the
// mapper cannot map (no longer served, or its discovery failed) gives the
// version at hand only: objects under another version's legacy hash are
// then neither pruned nor is their inventory read, until it maps again
// (claimed still knows them by their annotations).
func (a *Applier) legacyOwnerDescs(owner objectID, atHand string) []string {
	descs := []string{owner.describe(atHand)}
	mappings, err := a.clients.RESTMapper().RESTMappings(owner.gk)
	if err != nil {
		return descs
	}
	for _, m := range mappings {
		if desc := owner.describe(m.GroupVersionKind.Version); !slices.Contains(descs, desc) {
			descs = append(descs, desc)
		}
	}
	return descs
}

// describe returns the owner's description through version, as
// AnnotationOwner records it: "group/version/Kind namespace/name"
// ("version/Kind" for the core group).
func (o objectID) describe(version string) string {
	gv := schema.GroupVersion{Group: o.gk.Group, Version: version}
	return fmt.Sprintf("%s/%s %s/%s", gv, o.gk.Kind, o.namespace, o.name)
}
