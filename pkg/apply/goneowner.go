package apply

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// run applies (or dry-runs) set. A whole set pruned because its owner is
// gone (Set.OwnerKey, no objects) takes the sets named in its TakeOver
// with it: they are the same owner's set under an older name (a renamed
// generating handler), whose objects the set did not take stay in them,
// and with the owner gone nothing of them is wanted any more. Each is
// pruned as the set is, with the set's options, after its own check that
// the owner is gone (see confirmOwnerGone). While the owner lives they are
// left alone: another handler may still hold them.
func (a *Applier) run(ctx context.Context, set Set, objs []runtime.Object, dryRun bool) (Plan, error) {
	plan, err := a.runSet(ctx, set, objs, dryRun)
	if set.Owner != nil || set.OwnerKey == nil || len(objs) > 0 || len(set.TakeOver) == 0 {
		return plan, err
	}
	// ErrOwnerExists is the set's own answer; a taken-over set that
	// answers it (applied for the live owner of the name) is left as it
	// is. Any other error is returned, so that it is never mistaken for
	// "nothing to do".
	var errs []error
	if err != nil && !errors.Is(err, ErrOwnerExists) {
		errs = append(errs, err)
	}
	seen := map[string]bool{set.ID: true}
	for _, other := range set.TakeOver {
		if seen[other] {
			continue
		}
		seen[other] = true
		old := set
		old.ID, old.TakeOver = other, nil
		p, otherErr := a.runSet(ctx, old, nil, dryRun)
		plan = plan.merge(p)
		if otherErr != nil && !errors.Is(otherErr, ErrOwnerExists) {
			errs = append(errs, fmt.Errorf("set %q taken over: %w", other, otherErr))
		}
	}
	if len(errs) == 0 {
		return plan, err
	}
	return plan, errors.Join(errs...)
}

// merge returns the plan with other's entries appended.
func (p Plan) merge(other Plan) Plan {
	p.Create = append(p.Create, other.Create...)
	p.Update = append(p.Update, other.Update...)
	p.Unchanged = append(p.Unchanged, other.Unchanged...)
	p.Delete = append(p.Delete, other.Delete...)
	p.Recreate = append(p.Recreate, other.Recreate...)
	p.Kept = append(p.Kept, other.Kept...)
	return p
}
