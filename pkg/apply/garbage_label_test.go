package apply_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// An object labelled by hand with a lariat.dev/set value no set writes
// (here "mine", without the set annotations) is not taken: Apply refuses it.
// The refusal must tell the user something they can act on: which label
// value holds the object (the only trace of a "holding set" there is).
// Today it is a *ClaimedError that says the object "belongs to set \"\""
// and advises naming that set in Set.TakeOver, which no set can do.
func TestRefusalOfAHandLabelledObjectNamesItsLabel(t *testing.T) {
	a, kube, ns, owner := setup(t)
	handMadeCM(t, kube, ns, "labelled", map[string]string{apply.LabelSet: "mine"})
	err := a.Apply(t.Context(), apply.Set{Owner: owner, ID: "kids"}, cm("labelled", "set"))
	if err == nil {
		t.Fatal("a hand-labelled object was taken over")
	}
	var claimed *apply.ClaimedError
	if errors.As(err, &claimed) && claimed.SetID == "" && claimed.Owner == "" && !strings.Contains(err.Error(), "mine") {
		t.Errorf("the refusal of an object labelled %s=mine names no set and not the label: %q", apply.LabelSet, err)
	}
}
