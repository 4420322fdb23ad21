package apply

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// ClaimedError is returned (wrapped, joined with the set's other errors)
// for a desired object that already belongs to another set: its
// lariat.dev/set label names another set's hash. Applying it would hand it
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
	// record (Owner is empty for an ownerless set).
	SetID string
	Owner string
}

// Error names the object and the set holding it.
func (e *ClaimedError) Error() string {
	holder := fmt.Sprintf("set %q", e.SetID)
	if e.Owner != "" {
		holder += " of " + e.Owner
	}
	return fmt.Sprintf("%s belongs to %s; not taken over (name that set in Set.TakeOver to move it)", e.Object, holder)
}

// claimed returns a *ClaimedError when the live object (of key) is labelled
// as an object of another set than id, or one id may take over. An object
// without the label belongs to no set and may be applied.
func (id *setIdentity) claimed(key ObjectKey, live runtime.Object) error {
	m, err := meta.Accessor(live)
	if err != nil {
		return err
	}
	hash := m.GetLabels()[LabelSet]
	if hash == "" || hash == id.hash || hash == id.legacyHash || id.takeOver[hash] {
		return nil
	}
	annotations := m.GetAnnotations()
	return &ClaimedError{Object: key, SetID: annotations[AnnotationSetID], Owner: annotations[AnnotationOwner]}
}
