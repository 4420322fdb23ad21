// Package finalizer releases objects stuck being deleted because they carry
// the finalizer of an OnRemove handler that no longer exists: a handler was
// renamed or removed in a new release, and every object deleted since (and
// every object that was being deleted at the upgrade) waits forever for a
// handler that will never run. This is a common incident with wrangler, whose
// finalizers are "wrangler.cattle.io/<handler>"; Lariat's are
// "lariat.dev/<handler>" (generic.FinalizerName).
//
// Clean removes, from objects of one kind that are being deleted, the
// finalizers that have one of the given prefixes and are not among the
// finalizers still handled. It never touches objects that are not being
// deleted (a handler added later would still want its finalizer there), nor
// finalizers with other prefixes (other owners': Kubernetes', other
// operators'). Run it with DryRun first: the report lists what would go.
//
// A prefix must belong to this program for this kind: "lariat.dev/" is
// shared by every Lariat operator, so when another operator registers
// OnRemove handlers on the same kind, list its finalizers in Handled too, or
// clean with a narrower prefix (generic.FinalizerName of the removed
// handler's name, say).
package finalizer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/internal/jsonpatch"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// Prefixes of the finalizers OnRemove handlers keep.
const (
	// LariatPrefix is the prefix of Lariat's handler finalizers
	// (generic.FinalizerPrefix).
	LariatPrefix = generic.FinalizerPrefix
	// WranglerPrefix is the prefix of wrangler's handler finalizers, left
	// on objects by a program before it was ported to Lariat.
	WranglerPrefix = "wrangler.cattle.io/"
)

// Options say which finalizers Clean removes, and where.
type Options struct {
	// Prefixes limit Clean to finalizers starting with one of them;
	// required, so nothing is removed by default. See the package doc on
	// shared prefixes.
	Prefixes []string
	// Handled are the full finalizer names that still have a handler
	// (generic.FinalizerName of each OnRemove handler's name); they stay.
	Handled []string
	// Namespace limits Clean to one namespace; empty means all (and is
	// the only choice for cluster-scoped kinds).
	Namespace string
	// PendingFor leaves objects whose deletion started less than this long
	// ago: a handler that is merely slow, or a replica still starting,
	// gets its chance first.
	PendingFor time.Duration
	// DryRun reports what would be removed and writes nothing.
	DryRun bool

	pageSize int64 // objects listed per request; 0 means pageSize
}

// pageSize is how many objects Clean lists per request, so a kind with many
// objects is not read in one response.
const pageSize = 500

// Stuck is one object being deleted that carries finalizers nobody handles.
type Stuck struct {
	Namespace string
	Name      string
	// Unhandled are the finalizers Clean removes (or would, dry-running).
	Unhandled []string
	// Removed says they were removed.
	Removed bool
}

// Clean removes unhandled finalizers from the objects of gvk being deleted
// and returns what it found. It lists the kind from the API server, not a
// cache. Each removal is a JSON patch that tests the object's UID and its
// finalizer list as read, so a finalizer added or removed meanwhile fails
// that object (reported as an error; run again) rather than being undone.
// Errors of single objects are joined; the others are still cleaned. The
// kind is listed in pages of 500 objects.
func Clean(ctx context.Context, clients *client.SharedClientFactory, gvk schema.GroupVersionKind, opts Options) ([]Stuck, error) {
	if len(opts.Prefixes) == 0 || slices.Contains(opts.Prefixes, "") {
		return nil, errors.New("finalizer: Clean needs non-empty prefixes to limit what it removes")
	}
	c, err := clients.ForKind(gvk)
	if err != nil {
		return nil, fmt.Errorf("finalizer: %w", err)
	}
	var found []Stuck
	var errs []error
	listOpts := metav1.ListOptions{Limit: opts.pageSize}
	if listOpts.Limit == 0 {
		listOpts.Limit = pageSize
	}
	for {
		_, list, err := clients.NewObjects(gvk)
		if err != nil {
			return found, errors.Join(append(errs, fmt.Errorf("finalizer: %w", err))...)
		}
		if err := c.List(ctx, opts.Namespace, list, listOpts); err != nil {
			return found, errors.Join(append(errs, fmt.Errorf("finalizer: list %s: %w", gvk.Kind, err))...)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return found, errors.Join(append(errs, fmt.Errorf("finalizer: %w", err))...)
		}
		for _, item := range items {
			stuck, ok, err := opts.clean(ctx, c, gvk, item)
			if err != nil {
				errs = append(errs, err)
			}
			if ok {
				found = append(found, stuck)
			}
		}
		lm, err := meta.ListAccessor(list)
		if err != nil {
			return found, errors.Join(append(errs, fmt.Errorf("finalizer: %w", err))...)
		}
		if listOpts.Continue = lm.GetContinue(); listOpts.Continue == "" {
			break
		}
	}
	return found, errors.Join(errs...)
}

// clean releases one listed object if it is being deleted (for at least
// PendingFor) and carries unhandled finalizers; ok says it did.
func (o Options) clean(ctx context.Context, c *client.Client, gvk schema.GroupVersionKind, item runtime.Object) (stuck Stuck, ok bool, err error) {
	m, err := meta.Accessor(item)
	if err != nil {
		return Stuck{}, false, err
	}
	deleting := m.GetDeletionTimestamp()
	if deleting == nil || time.Since(deleting.Time) < o.PendingFor {
		return Stuck{}, false, nil
	}
	finalizers := m.GetFinalizers()
	var unhandled []string
	keep := make([]string, 0, len(finalizers))
	for _, f := range finalizers {
		if o.unhandled(f) {
			unhandled = append(unhandled, f)
		} else {
			keep = append(keep, f)
		}
	}
	if len(unhandled) == 0 {
		return Stuck{}, false, nil
	}
	stuck = Stuck{Namespace: m.GetNamespace(), Name: m.GetName(), Unhandled: unhandled}
	if o.DryRun {
		return stuck, true, nil
	}
	err = release(ctx, c, m, finalizers, keep, item)
	switch {
	case apierrors.IsNotFound(err):
		// Gone meanwhile: nothing left to release.
		return stuck, true, nil
	case err != nil:
		return stuck, true, fmt.Errorf("finalizer: %s %s: %w", gvk.Kind, toolscache.MetaObjectToName(m), err)
	}
	stuck.Removed = true
	return stuck, true, nil
}

func (o Options) unhandled(f string) bool {
	return slices.ContainsFunc(o.Prefixes, func(p string) bool { return strings.HasPrefix(f, p) }) &&
		!slices.Contains(o.Handled, f)
}

// release writes keep as the object's finalizers, if its UID and
// finalizers are still those read.
func release(ctx context.Context, c *client.Client, m metav1.Object, read, keep []string, into runtime.Object) error {
	patch, err := jsonpatch.Marshal(
		jsonpatch.Test("/metadata/uid", m.GetUID()),
		jsonpatch.Test("/metadata/finalizers", read),
		jsonpatch.Replace("/metadata/finalizers", keep),
	)
	if err != nil {
		return err
	}
	return c.Patch(ctx, m.GetNamespace(), m.GetName(), types.JSONPatchType, patch, into.DeepCopyObject(), metav1.PatchOptions{})
}
