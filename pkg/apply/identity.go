package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

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
func (a *Applier) confirmOwnerGone(ctx context.Context, key ObjectKey, setID string) error {
	live, err := a.ownerLive(ctx, key)
	if err != nil {
		return fmt.Errorf("apply: confirm owner %s is gone: %w", key, err)
	}
	if live {
		return fmt.Errorf("apply: set %q of %s not pruned: %w", setID, key, ErrOwnerExists)
	}
	return nil
}

// ownerLive reports whether the owner exists and is not being deleted.
func (a *Applier) ownerLive(ctx context.Context, key ObjectKey) (bool, error) {
	uid, err := a.liveOwnerUID(ctx, idOf(key))
	return uid != "", err
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
	hash         string
	legacyHash   string // the hash of sets with an owner before it left the owner's version out
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
		id.ownerUID = m.GetUID()
		id.ownerDesc = fmt.Sprintf("%s/%s %s/%s", gvk.GroupVersion(), gvk.Kind, m.GetNamespace(), m.GetName())
		ownerID = objectID{gk: gvk.GroupKind(), namespace: m.GetNamespace(), name: m.GetName()}
		if m.GetNamespace() != "" {
			id.invNamespace = m.GetNamespace()
		}
	} else if k := set.OwnerKey; k != nil {
		id.ownerDesc = fmt.Sprintf("%s/%s %s/%s", k.GVK.GroupVersion(), k.GVK.Kind, k.Namespace, k.Name)
		ownerID = idOf(*k)
		if k.Namespace != "" {
			id.invNamespace = k.Namespace
		}
	} else if set.ID == "" {
		return nil, errors.New("apply: a set needs an owner or an ID")
	}
	// The hash leaves the owner's version out: an owner read through
	// another version is the same owner and must name the same set.
	var hashed string
	if ownerID != (objectID{}) {
		hashed = ownerID.hashInput()
		// Sets written before hashed the owner with the version it was
		// read through; Apply takes them over (see readInventory).
		id.legacyHash = setHash(id.ownerDesc, set.ID)
	}
	id.hash = setHash(hashed, set.ID)
	id.ownerID, id.takeOver = ownerID, set.TakeOver
	id.adopt, id.adoptKinds = set.Adopt, set.AdoptKinds
	for _, other := range set.TakeOver {
		if id.takeOverHashes == nil {
			id.takeOverHashes = map[string]bool{}
		}
		id.takeOverHashes[setHash(hashed, other)] = true
		if id.legacyHash != "" {
			id.takeOverHashes[setHash(id.ownerDesc, other)] = true
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
// with its legacy hash, so objects written before the hash left the owner's
// version out are pruned or taken over rather than orphaned. (A legacy hash
// cannot equal another set's hash: their inputs differ in shape.)
func (id *setIdentity) selector() string {
	if id.legacyHash == "" {
		return LabelSet + "=" + id.hash
	}
	return fmt.Sprintf("%s in (%s,%s)", LabelSet, id.hash, id.legacyHash)
}

// labelledBy reports whether hash, an object's LabelSet label, is one the
// set's selector selects.
func (id *setIdentity) labelledBy(hash string) bool {
	return hash != "" && (hash == id.hash || hash == id.legacyHash)
}
