package controller

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Only an error whose every cause is permanent stops the retries; a
// permanent cause next to a conflict is retried quietly; next to any other
// failure, retried as that one is.
func TestOnlyPermanent(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "services"}, "x", errors.New("changed"))
	other := errors.New("other")
	bad := Permanent(errors.New("bad spec"))
	wrapped := fmt.Errorf("no children: %w", ErrPermanent)
	cases := []struct {
		err                error
		permanent, routine bool // onlyPermanent, routineOrPermanent
	}{
		{bad, true, true},
		{wrapped, true, true},
		{ErrPermanent, true, true},
		{&HandlerError{Handler: "a", Err: bad}, true, true},
		{errors.Join(&HandlerError{Handler: "a", Err: bad}, &HandlerError{Handler: "b", Err: wrapped}), true, true},
		{&HandlerError{Handler: "a", Err: errors.Join(bad, conflict)}, false, true},
		{errors.Join(&HandlerError{Handler: "a", Err: bad}, &HandlerError{Handler: "b", Err: conflict}), false, true},
		{errors.Join(&HandlerError{Handler: "a", Err: bad}, &HandlerError{Handler: "b", Err: other}), false, false},
		{&HandlerError{Handler: "a", Err: errors.Join(wrapped, other)}, false, false},
		{other, false, false},
		{conflict, false, true},
	}
	for i, c := range cases {
		if got := onlyPermanent(c.err); got != c.permanent {
			t.Errorf("case %d: onlyPermanent(%v) = %v, want %v", i, c.err, got, c.permanent)
		}
		if got := routineOrPermanent(c.err); got != c.routine {
			t.Errorf("case %d: routineOrPermanent(%v) = %v, want %v", i, c.err, got, c.routine)
		}
	}
	if bad.Error() != "bad spec" || !errors.Is(bad, ErrPermanent) || Permanent(nil) != nil {
		t.Errorf("Permanent(bad spec): message %q, Is ErrPermanent %v; Permanent(nil) = %v", bad.Error(), errors.Is(bad, ErrPermanent), Permanent(nil))
	}
}
