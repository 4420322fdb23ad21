package apply

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ClaimedError is returned (wrapped, joined with the set's other errors)
// for a desired object that already belongs to another set: its
// lariat.dev/set label names another set's hash, or it is a set's inventory. Applying it would hand it
// to this set (one field manager applies every set, so the other set's
// fields and owner reference would go) and this set's pruning could later
// delete it while the other set still wants it; so the object is left as it
// is and the rest of the set is still applied. To move objects between sets
// of one owner (a renamed generating handler), name the old set in
// Set.TakeOver.
type ClaimedError struct {
	// Object is the desired object that is another set's.
	Object ObjectKey
	// SetID and Owner name the set that holds it, as its annotations
	// record (Owner is empty for an ownerless set). Both are empty when
	// the annotations do not name the set its label names (a user moved
	// the object to another set by relabelling it): Hash then says which.
	SetID string
	Owner string
	// Hash is the object's LabelSet label, the hash of the set holding
	// it (empty for an inventory).
	Hash string
	// Inventory says the object is that set's inventory ConfigMap,
	// which no set may apply (Set.TakeOver does not change that).
	Inventory bool
}

// Error names the object and the set holding it.
func (e *ClaimedError) Error() string {
	holder := fmt.Sprintf("set %q", e.SetID)
	if e.Owner != "" {
		holder += " of " + e.Owner
	}
	if e.Inventory {
		return fmt.Sprintf("%s is the inventory of %s; not applied", e.Object, holder)
	}
	if e.SetID == "" && e.Owner == "" {
		// No set's annotations explain the label: another set's hash put
		// there by hand, or a label that is no set's at all.
		return fmt.Sprintf("%s is labelled %s=%s, which is not this set's nor one it takes over, and its annotations do not name "+
			"that set; not taken over: if another set holds it, name that set in Set.TakeOver to move it; if the label was put "+
			"there by hand, remove it and label the object %s=true (or set Set.Adopt) to let this set take it",
			e.Object, LabelSet, e.Hash, LabelAdopt)
	}
	return fmt.Sprintf("%s belongs to %s; not taken over (name that set in Set.TakeOver to move it)", e.Object, holder)
}

// claimed returns a *ClaimedError when the live object (of key) is a set's
// inventory, or is labelled as an object of another set than id or one id
// may take over; and a *NotManagedError when it carries no set's label and
// id may not adopt it (see Set.Adopt). A label that is not one of id's
// hashes still names id's set (or one it takes over) when it is the legacy
// hash of the owner and set ID the object's annotations record, and those
// name the same owner, whatever version it was read through, and the same
// set ID: a legacy hash made with another version of the owner than the one
// at hand. The annotations alone never hand an object to a set: a user who
// relabelled the object with another set's hash moved it to that set.
func (id *setIdentity) claimed(key ObjectKey, live runtime.Object) error {
	m, err := meta.Accessor(live)
	if err != nil {
		return err
	}
	annotations := m.GetAnnotations()
	setID, owner := annotations[AnnotationSetID], annotations[AnnotationOwner]
	if _, ok := m.GetLabels()[LabelInventory]; ok {
		// A set's inventory is never one of its objects, nor another
		// set's: applying over it would lose where its objects are.
		return &ClaimedError{Object: key, SetID: setID, Owner: owner, Inventory: true}
	}
	hash := m.GetLabels()[LabelSet]
	if hash == "" {
		if id.mayAdopt(key.GVK.GroupKind(), m.GetLabels()) {
			return nil
		}
		return id.notManaged(key, m)
	}
	if id.labelledBy(hash) || id.takeOverHashes[hash] {
		return nil
	}
	if id.legacyOfAnotherVersion(hash, owner, setID) {
		return nil
	}
	if !annotationsName(hash, owner, setID) {
		// The annotations are those of a set the object was moved
		// out of; they do not say whose it is now.
		setID, owner = "", ""
	}
	return &ClaimedError{Object: key, SetID: setID, Owner: owner, Hash: hash}
}

// legacyOfAnotherVersion reports whether hash, an object's LabelSet label,
// is the legacy hash of the set its annotations record (owner, setID), and
// that set is id's, or one id takes over, with its owner read through
// another version.
func (id *setIdentity) legacyOfAnotherVersion(hash, owner, setID string) bool {
	if owner == "" || len(id.legacyHashes) == 0 || ownerOf(owner) != id.ownerID {
		return false
	}
	if setID != id.id && !slices.Contains(id.takeOver, setID) {
		return false
	}
	return hash == setHash(owner, setID)
}

// annotationsName reports whether hash is a hash (current or legacy) of the
// set that the annotations owner and setID record.
func annotationsName(hash, owner, setID string) bool {
	if owner == "" {
		return hash == setHash("", setID)
	}
	o := ownerOf(owner)
	return hash == setHash(owner, setID) || (o != objectID{} && hash == setHash(o.hashInput(), setID))
}

// ownerOf reads the owner's identity from an AnnotationOwner value,
// "group/version/Kind namespace/name" ("version/Kind" for the core group);
// the zero objectID when there is none or it does not parse.
func ownerOf(annotation string) objectID {
	kind, nsName, ok := strings.Cut(annotation, " ")
	if !ok {
		return objectID{}
	}
	slash := strings.LastIndex(kind, "/")
	ns, name, ok := strings.Cut(nsName, "/")
	if slash < 0 || !ok {
		return objectID{}
	}
	gv, err := schema.ParseGroupVersion(kind[:slash])
	if err != nil {
		return objectID{}
	}
	return objectID{gk: schema.GroupKind{Group: gv.Group, Kind: kind[slash+1:]}, namespace: ns, name: name}
}
