package generic

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/condition"
	"github.com/lariat-dev/lariat/pkg/controller"
)

// StatusController is what status and generating handlers need of a typed
// controller; Controller and NonNamespacedController have it.
type StatusController[T RuntimeMetaObject] interface {
	// OnChange registers sync, named name, for every change to the kind's
	// objects until ctx ends; sync is given nil when an object is deleted.
	OnChange(ctx context.Context, name string, sync ObjectHandler[T])
	// UpdateStatus replaces obj's status subresource and returns the
	// stored object.
	UpdateStatus(ctx context.Context, obj T) (T, error)
	// GroupVersionKind returns the controller's kind.
	GroupVersionKind() schema.GroupVersionKind
}

// StatusAccess reaches a kind's status without reflection; the code
// generator fills it in for every kind with a status type.
type StatusAccess[T RuntimeMetaObject, S any] struct {
	// Get returns the object's status.
	Get func(obj T) S
	// Set stores a status into the object.
	Set func(obj T, status S)
	// Conditions returns the status's []metav1.Condition, or is nil when
	// the status has none.
	Conditions func(status *S) *[]metav1.Condition
	// SetCondition sets a condition from the handler's error in a status
	// whose conditions are of another type than metav1.Condition (the code
	// generator fills it in with a condition.Shape). It is used when
	// Conditions is nil; when both are nil the condition argument of the
	// handlers is ignored, which the generator never leaves silently: it
	// rejects conditions it cannot set.
	SetCondition func(status *S, cond condition.Cond, generation int64, err error)
	// ObservedGeneration returns the status's observedGeneration, or is nil
	// when the status has none.
	ObservedGeneration func(status *S) *int64
}

// StatusHandler computes an object's new status from the object and its
// current status. Both are copies it may modify.
type StatusHandler[T RuntimeMetaObject, S any] func(obj T, status S) (S, error)

// GeneratingHandler computes the objects an object wants to exist (its
// children) and its new status.
type GeneratingHandler[T RuntimeMetaObject, S any] func(obj T, status S) ([]runtime.Object, S, error)

// RegisterStatusHandler runs handler for every change of the kind until ctx
// ends: on a copy of the object, then it sets cond (when not empty) from
// the handler's error, sets observedGeneration where the status has one, and
// writes the status with UpdateStatus only when it really changed (so the
// update does not trigger another round).
//
// When the handler fails, the status it returned is dropped: what is written
// is the status the object had, with only cond set False from the error, so
// that "return FooStatus{}, err" does not wipe the other fields and
// conditions. An error made only of API conflicts is routine (the handler or
// the write raced another writer): it writes nothing, leaves cond as it is
// and is retried quietly with the object as it then is. An error marked
// with controller.Permanent (retrying cannot fix it) sets cond False with
// its message like any other, and is not retried: the object's next
// version runs the handler again.
//
// Like wrangler's, it skips an object being deleted (one with a
// deletionTimestamp); RegisterStatusHandlerWith can include those.
func RegisterStatusHandler[T RuntimeMetaObject, S any](ctx context.Context, c StatusController[T], access StatusAccess[T, S], cond condition.Cond, name string, handler StatusHandler[T, S]) {
	RegisterStatusHandlerWith(ctx, c, access, cond, name, StatusOptions{}, handler)
}

// StatusOptions changes what RegisterStatusHandlerWith does.
type StatusOptions struct {
	// WhileDeleting runs the handler, and writes the status, for an
	// object being deleted too (a deletionTimestamp, held by finalizers:
	// the API server accepts a status write to it), so that its status
	// can say what its deletion waits for. A write that finds the object
	// gone meanwhile is a quiet no-op: there is nothing left to describe.
	WhileDeleting bool
}

// RegisterStatusHandlerWith is RegisterStatusHandler with opts.
func RegisterStatusHandlerWith[T RuntimeMetaObject, S any](ctx context.Context, c StatusController[T], access StatusAccess[T, S], cond condition.Cond, name string, opts StatusOptions, handler StatusHandler[T, S]) {
	c.OnChange(ctx, name, func(key string, obj T) (T, error) {
		var zero T
		if obj == zero || obj.GetDeletionTimestamp() != nil && !opts.WhileDeleting {
			return zero, nil
		}
		copied, err := deepCopy(obj)
		if err != nil {
			return zero, fmt.Errorf("status handler %s: %w", name, err)
		}
		status, handlerErr := handler(copied, access.Get(copied))
		updated, err := saveStatus(ctx, c, access, cond, obj, copied, status, handlerErr)
		if handlerErr == nil && err != nil && obj.GetDeletionTimestamp() != nil && apierrors.IsNotFound(err) {
			// The object being deleted is gone: its finalizers were
			// removed between the read and the write.
			return zero, nil
		}
		return updated, err
	})
}

// saveStatus records err in cond and writes the status if it differs from
// obj's: the handler's status when err is nil, the stored one otherwise. It
// returns the stored object (or the zero T when nothing was written) and
// the handler's error joined with the write's.
func saveStatus[T RuntimeMetaObject, S any](ctx context.Context, c StatusController[T], access StatusAccess[T, S], cond condition.Cond, obj, copied T, status S, err error) (T, error) {
	var zero T
	if errors.Is(err, controller.ErrIgnore) || (err != nil && onlyConflicts(err)) {
		return zero, err
	}
	target := copied
	if err != nil {
		// The handler's copy and status may be half-changed (or zero):
		// start again from the object as stored.
		stored, copyErr := deepCopy(obj)
		if copyErr != nil {
			return zero, errors.Join(err, copyErr)
		}
		target, status = stored, access.Get(stored)
	}
	if cond != "" {
		switch {
		case access.Conditions != nil:
			cond.SetError(access.Conditions(&status), obj.GetGeneration(), "", err)
		case access.SetCondition != nil:
			access.SetCondition(&status, cond, obj.GetGeneration(), err)
		}
	}
	if access.ObservedGeneration != nil && err == nil {
		*access.ObservedGeneration(&status) = obj.GetGeneration()
	}
	if equality.Semantic.DeepEqual(access.Get(obj), status) {
		return zero, err
	}
	access.Set(target, status)
	updated, updateErr := c.UpdateStatus(ctx, target)
	if updateErr != nil {
		return zero, errors.Join(err, updateErr)
	}
	return updated, err
}

// deepCopy copies obj, failing rather than panicking when its DeepCopyObject
// returns another type.
func deepCopy[T RuntimeMetaObject](obj T) (T, error) {
	copied, ok := obj.DeepCopyObject().(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("DeepCopyObject of %T returned another type", obj)
	}
	return copied, nil
}

// onlyConflicts reports whether every cause in err's tree is an API
// conflict. apierrors.IsConflict alone is not enough: it finds a conflict
// anywhere in a joined error, next to a real failure.
func onlyConflicts(err error) bool {
	if status, ok := err.(apierrors.APIStatus); ok {
		return status.Status().Reason == metav1.StatusReasonConflict
	}
	switch e := err.(type) {
	case interface{ Unwrap() []error }:
		errs := e.Unwrap()
		for _, cause := range errs {
			if !onlyConflicts(cause) {
				return false
			}
		}
		return len(errs) > 0
	case interface{ Unwrap() error }:
		return onlyConflicts(e.Unwrap())
	}
	return false
}
