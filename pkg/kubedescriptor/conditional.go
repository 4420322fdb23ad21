package kubedescriptor

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Every write is conditional on the object as the descriptor last knew it,
// so that a write held in the network lands only on what it was meant
// for. Behind a fence (package leader) this is what ties a write to its
// term: the next leader's write changes the object, and the old term's
// write, delivered late, then conflicts. An apply that may create carries
// createOnly, which the fence stamps with its term; an apply of an object
// that exists carries its UID, which makes the API server refuse it
// (Conflict, "uid mismatch") instead of creating the object when it is
// gone, and its resourceVersion. A resourceVersion alone would not do: an
// apply of an absent object creates it whatever resourceVersion it
// carries.

// writeAttempts bounds how often one write reads the object again after a
// conflict: each attempt reads afresh, so a conflict only repeats while
// someone else keeps writing the object; the scheduler then retries the
// operation (a Conflict is retriable).
const writeAttempts = 3

// target is the object a write is conditional on: nil when it was read as
// absent (the apply only creates).
type target struct {
	uid     types.UID
	version string
}

// knownTarget is the object at key as the descriptor's own last apply (or
// a retrieve that found it in sync) left it, if that is the object of uid
// (any, when uid is empty); nil when it knows none, and the object must
// be read.
func (k *kind) knownTarget(key string, uid types.UID) *target {
	st := k.applied.get(key)
	if st == nil || st.uid == "" || st.syncedAt == "" || uid != "" && st.uid != uid {
		return nil
	}
	return &target{uid: st.uid, version: st.syncedAt}
}

// readTarget reads the object at key from the API server: nil when there
// is none. An object this field manager did not create (no label of its
// own, or a copy of one of its objects: see authored) is refused with a
// *NotManagedError unless adopt, or unless it is the object of UID ours
// (one the descriptor applied, its label changed since).
func (k *kind) readTarget(ctx context.Context, key string, adopt bool, ours types.UID) (*target, error) {
	live, err := k.getLive(ctx, key)
	if err != nil || live == nil {
		return nil, err
	}
	if adopt || ours != "" && live.GetUID() == ours {
		return &target{uid: live.GetUID(), version: live.GetResourceVersion()}, nil
	}
	by := live.GetLabels()[LabelManagedBy]
	authored := false
	if by == k.opts.FieldManager {
		if authored, err = k.authored(ctx, live); err != nil {
			return nil, err
		}
	}
	if !authored {
		return nil, &NotManagedError{Key: key, ManagedBy: by, FieldManager: k.opts.FieldManager, Copy: by == k.opts.FieldManager}
	}
	return &target{uid: live.GetUID(), version: live.GetResourceVersion()}, nil
}

// write applies value conditional on the object at key: first on known
// (read from the API server when nil), then, after a conflict, on what a
// fresh read finds, at most writeAttempts times in all. adopt lets it
// apply to an object this field manager did not create; ours is the UID
// of the object the value was applied to ("" for a create).
func (k *kind) write(ctx context.Context, key string, value any, known *target, adopt bool, ours types.UID) (any, error) {
	tgt := known
	var err error
	for attempt := 0; ; attempt++ {
		if known == nil || attempt > 0 {
			if tgt, err = k.readTarget(ctx, key, adopt, ours); err != nil {
				return nil, err
			}
		}
		var md any
		md, err = k.applyTo(ctx, key, value, tgt)
		if !changedMeanwhile(err) || attempt+1 >= writeAttempts {
			return md, err
		}
	}
}

// applyTo applies value conditional on tgt (see target).
func (k *kind) applyTo(ctx context.Context, key string, value any, tgt *target) (any, error) {
	if tgt == nil {
		return k.applyVersioned(ctx, key, value, "", createOnly)
	}
	return k.applyVersioned(ctx, key, value, tgt.uid, tgt.version)
}

// changedMeanwhile tells whether err says the object is no longer the one
// a conditional write was meant for: changed (Conflict), gone (a UID's
// Conflict), created (a createOnly's Conflict), or replaced by another
// object of its name (the API server refuses an apply's UID as a change
// of an immutable field).
func changedMeanwhile(err error) bool {
	if apierrors.IsConflict(err) {
		return true
	}
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == "metadata.uid" {
			return true
		}
	}
	return false
}

// deleteTarget is the object a delete of key is conditional on: the one
// of uid as the descriptor knows it, or as read (nil when it is gone or
// replaced: nothing to delete). Known without a UID (restored by a
// revert, say), an object that is not this manager's (no label of its
// own, or a copy: see authored) is left alone.
func (k *kind) deleteTarget(ctx context.Context, key string, uid types.UID, reread bool) (*target, error) {
	if !reread {
		if t := k.knownTarget(key, uid); t != nil {
			return t, nil
		}
	}
	live, err := k.getLive(ctx, key)
	switch {
	case err != nil || live == nil:
		return nil, err
	case uid != "" && live.GetUID() != uid:
		return nil, nil // replaced: someone else's object
	case uid == "" && live.GetLabels()[LabelManagedBy] != k.opts.FieldManager:
		return nil, nil
	case uid == "":
		if authored, err := k.authored(ctx, live); err != nil || !authored {
			return nil, err
		}
	}
	return &target{uid: live.GetUID(), version: live.GetResourceVersion()}, nil
}

// update applies the new value of an object the descriptor applied (or
// retrieved) as the object of UID md: conditional on the object as its
// own last apply left it, or as read; gone since, it is created again by
// a create-only apply (stamped by a fence); replaced by an object another
// manager made, it is not taken over (unless Options.Adopt).
func (k *kind) update(ctx context.Context, key string, value any, md any) (any, error) {
	uid, _ := md.(types.UID)
	return k.write(ctx, key, value, k.knownTarget(key, uid), k.opts.Adopt, uid)
}

// preconditions are a delete's conditions on tgt.
func (tgt *target) preconditions() *metav1.Preconditions {
	return &metav1.Preconditions{UID: &tgt.uid, ResourceVersion: &tgt.version}
}
