package apply

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// LabelAdopt, set to "true" by a user on an object that exists without
// belonging to any set, lets the first set that names the object take it
// over (as Set.Adopt would for its kind): the object then carries that
// set's label, is applied as the set says and is pruned with it. It has no
// effect on an object another set holds (see ClaimedError and
// Set.TakeOver), and Apply never writes or removes it.
const LabelAdopt = "lariat.dev/adopt"

// NotManagedError is returned (wrapped, joined with the set's other errors)
// for a desired object that exists on the API server without belonging to
// any set: made by hand, by another tool, or taken out of its set by
// removing its LabelSet. Unless the set may adopt it (Set.Adopt,
// Set.AdoptKinds, or LabelAdopt=true on the object), nothing is written to
// it: a forced apply would take over the fields its manager set, and the
// set's pruning would later delete it (a Namespace with everything in it).
// It is never pruned either, since it does not carry the set's label; the
// rest of the set is still applied. This is kubedescriptor's
// NotManagedError for desired sets; wrangler's apply adopts such objects
// silently.
type NotManagedError struct {
	// Object is the desired object that exists unmanaged.
	Object ObjectKey
	// SetID and Owner name the set that was refused (Owner is empty for
	// an ownerless set).
	SetID, Owner string
	// FieldManagers are the field managers of the object's
	// managedFields, sorted: who wrote it.
	FieldManagers []string
	// ManagedBy holds the object's labels that name a manager (keys
	// ending in "managed-by", such as app.kubernetes.io/managed-by).
	ManagedBy map[string]string
	// Controller is the object's controller reference ("Kind name"),
	// empty when it has none.
	Controller string
}

// Error names the object, who manages it and how to take it over.
func (e *NotManagedError) Error() string {
	set := fmt.Sprintf("set %q", e.SetID)
	if e.Owner != "" {
		set += " of " + e.Owner
	}
	var who []string
	if len(e.FieldManagers) > 0 {
		who = append(who, "field managers "+strings.Join(e.FieldManagers, ", "))
	}
	for _, k := range slices.Sorted(maps.Keys(e.ManagedBy)) {
		who = append(who, "label "+k+"="+e.ManagedBy[k])
	}
	if e.Controller != "" {
		who = append(who, "controller "+e.Controller)
	}
	if len(who) == 0 {
		who = append(who, "no field manager or label naming one")
	}
	return fmt.Sprintf("%s exists and belongs to no set (%s); %s did not take it over: "+
		"label it %s=true, or set Set.Adopt or Set.AdoptKinds (generating handlers: SetOptions) for %s to take it over; "+
		"or delete or rename it", e.Object, strings.Join(who, "; "), set, LabelAdopt, kindName(e.Object.GVK.GroupKind()))
}

func kindName(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.String()
}

// notManaged describes live, an object of key that belongs to no set, as
// the refusal of id's set.
func (id *setIdentity) notManaged(key ObjectKey, live metav1.Object) *NotManagedError {
	e := &NotManagedError{Object: key, SetID: id.id, Owner: id.ownerDesc}
	for _, entry := range live.GetManagedFields() {
		if entry.Manager != "" && !slices.Contains(e.FieldManagers, entry.Manager) {
			e.FieldManagers = append(e.FieldManagers, entry.Manager)
		}
	}
	slices.Sort(e.FieldManagers)
	for k, v := range live.GetLabels() {
		if strings.HasSuffix(k, "managed-by") {
			if e.ManagedBy == nil {
				e.ManagedBy = map[string]string{}
			}
			e.ManagedBy[k] = v
		}
	}
	if ref := metav1.GetControllerOfNoCopy(live); ref != nil {
		e.Controller = ref.Kind + " " + ref.Name
	}
	return e
}

// mayAdopt reports whether the set may take over an object of gk that
// belongs to no set and carries labels.
func (id *setIdentity) mayAdopt(gk schema.GroupKind, labels map[string]string) bool {
	return id.adopt || slices.Contains(id.adoptKinds, gk) || labels[LabelAdopt] == "true"
}
