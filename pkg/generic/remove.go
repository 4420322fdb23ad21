package generic

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/internal/jsonpatch"
	"github.com/lariat-dev/lariat/pkg/controller"
)

// FinalizerPrefix prefixes the finalizers OnRemove handlers keep on objects.
const FinalizerPrefix = "lariat.dev/"

// maxFinalizerNameLength is the limit on the part of a qualified name after
// the prefix, which is what the API server validates finalizers as.
const maxFinalizerNameLength = 63

const jsonPatchType = types.JSONPatchType

// FinalizerName returns the finalizer an OnRemove handler named handlerName
// keeps on objects: FinalizerPrefix followed by the name, made a valid
// qualified name. A name that had to be changed (invalid characters, longer
// than 63 characters) gets a hash of the original appended, so two handlers
// whose names differ only in such characters never share a finalizer.
func FinalizerName(handlerName string) string {
	var b strings.Builder
	for _, r := range handlerName {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := trimToAlphanumeric(b.String())
	if name != "" && name == handlerName && len(name) <= maxFinalizerNameLength {
		return FinalizerPrefix + name
	}
	h := fnv.New32a()
	h.Write([]byte(handlerName))
	suffix := fmt.Sprintf("%08x", h.Sum32())
	if keep := maxFinalizerNameLength - len(suffix) - 1; len(name) > keep {
		name = trimToAlphanumeric(name[:keep])
	}
	if name == "" {
		return FinalizerPrefix + suffix
	}
	return FinalizerPrefix + name + "-" + suffix
}

// trimToAlphanumeric trims what a qualified name may not start or end with.
func trimToAlphanumeric(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
}

// removeHandler runs handler for objects being deleted, holding each object
// with a finalizer until handler has succeeded for it.
//
// Both finalizer changes are JSON patches whose test operations state
// exactly what they rely on (the object's identity and its finalizer list),
// not the object's resourceVersion: an update by anyone to anything else
// between the cached read and the patch does not fail it, so writers that
// change labels, data or status at the same time cause no conflicts, and
// nothing but the finalizer list is ever written. When a test does fail (the
// cache was stale, another finalizer was added at the same moment) the key
// is retried quietly, as on a conflict, and the retry starts from the newer
// object.
type removeHandler struct {
	ctx       context.Context
	finalizer string
	resource  schema.GroupResource
	handler   controller.SharedHandlerFunc
	patch     func(ctx context.Context, namespace, name string, data []byte) (runtime.Object, error)
}

func (h *removeHandler) OnChange(key string, obj runtime.Object) (runtime.Object, error) {
	if obj == nil || isNilPointer(obj) {
		return nil, nil // gone: the finalizer did its job, or the object never had it
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	ours := slices.Contains(m.GetFinalizers(), h.finalizer)
	if m.GetDeletionTimestamp() == nil {
		if ours {
			return nil, nil
		}
		return h.addFinalizer(m)
	}
	if !ours {
		// Deletion began before the finalizer was added: the API server
		// refuses new finalizers now, and the handler was never promised
		// this object.
		return nil, nil
	}
	newObj, err := h.handler(key, obj)
	if err != nil {
		return newObj, err
	}
	if newObj != nil && !isNilPointer(newObj) {
		// The handler may have written the object; its finalizer list is
		// the newer one. A placeholder without a UID (&v1.ConfigMap{})
		// says nothing of the object, as in the handler chain.
		nm, err := meta.Accessor(newObj)
		if err != nil {
			return nil, err
		}
		if nm.GetUID() != "" {
			m, obj = nm, newObj
		}
	}
	return h.removeFinalizer(obj, m)
}

// addFinalizer appends the finalizer, provided the object is still the one
// that was read (same UID), is not being deleted, and has the finalizers
// that were read. The last test keeps a stale cache from adding the
// finalizer a second time. A test op whose value is null passes when the key
// is absent, which is how the API server stores an empty finalizer list
// (verified against kube-apiserver 1.36, for built-in kinds and CRDs).
func (h *removeHandler) addFinalizer(m metav1.Object) (runtime.Object, error) {
	ops := []jsonpatch.Op{h.uidTest(m), jsonpatch.Test("/metadata/deletionTimestamp", nil)}
	if finalizers := m.GetFinalizers(); len(finalizers) == 0 {
		ops = append(ops,
			jsonpatch.Test("/metadata/finalizers", nil),
			jsonpatch.Add("/metadata/finalizers", []string{h.finalizer}))
	} else {
		ops = append(ops,
			jsonpatch.Test("/metadata/finalizers", finalizers),
			jsonpatch.Add("/metadata/finalizers/-", h.finalizer))
	}
	return h.send(m, ops)
}

// removeFinalizer removes every occurrence of the finalizer, last first so
// that earlier indexes stay valid, each guarded by a test that the index
// still holds it, so that no other finalizer is ever removed.
func (h *removeHandler) removeFinalizer(obj runtime.Object, m metav1.Object) (runtime.Object, error) {
	ops := []jsonpatch.Op{h.uidTest(m)}
	finalizers := m.GetFinalizers()
	for i := len(finalizers) - 1; i >= 0; i-- {
		if finalizers[i] != h.finalizer {
			continue
		}
		path := "/metadata/finalizers/" + strconv.Itoa(i)
		ops = append(ops, jsonpatch.Test(path, h.finalizer), jsonpatch.Remove(path))
	}
	if len(ops) == 1 {
		return obj, nil // the handler removed it itself
	}
	return h.send(m, ops)
}

func (h *removeHandler) uidTest(m metav1.Object) jsonpatch.Op {
	return jsonpatch.Test("/metadata/uid", string(m.GetUID()))
}

func (h *removeHandler) send(m metav1.Object, ops []jsonpatch.Op) (runtime.Object, error) {
	data, err := jsonpatch.Marshal(ops...)
	if err != nil {
		return nil, err
	}
	obj, err := h.patch(h.ctx, m.GetNamespace(), m.GetName(), data)
	switch {
	case err == nil:
		return obj, nil
	case apierrors.IsNotFound(err):
		return nil, nil // deleted meanwhile; nothing left to hold or release
	case isFailedPatchTest(err):
		// The object changed since it was cached: routine, like a conflict.
		// The retry (with backoff) starts from the newer object.
		return nil, controller.RetryQuietly(fmt.Errorf("finalizer %s of %s %q: object changed since it was read: %w",
			h.finalizer, h.resource, m.GetName(), err))
	default:
		return nil, fmt.Errorf("finalizer %s: %w", h.finalizer, err)
	}
}

// isFailedPatchTest tells a JSON patch that could not be applied (a failed
// test, a missing index) from a rejected object: the API server reports
// both as 422 Invalid, but only validation errors carry the object's name
// and the fields at fault.
func isFailedPatchTest(err error) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	details := status.Status().Details
	return details == nil || (details.Name == "" && len(details.Causes) == 0)
}
