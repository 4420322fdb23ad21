package dependents

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// The loop's own deletes. When the loop takes an object out of the
// scheduler (its owner withdrew it, or went), the object's last state in
// the loop's picture is of an object being deleted: were the owner to want
// it again before the loop sees the deletion, the old object's readiness
// (every replica available) would put its marker, and what requires it
// would be created alongside a new object that is not ready. So the
// object is dropped from the picture at once, and its UID remembered:
// events of that UID still queued behind the delete are not read as the
// object being there. The loop's picture is corrected when the deletion
// arrives, or an object of another UID (created again) does.

// dropDeleted takes the object at key out of the loop's picture, as the
// loop deletes it.
func (h *loopHandler[T]) dropDeleted(key string) {
	h.saveObject(key)
	delete(h.updating, key)
	obj := h.live[key]
	if obj == nil {
		return
	}
	if uid := uidOf(obj); uid != "" {
		h.gone[key] = uid
	}
	delete(h.live, key)
}

// seen records obj, an informer's view of the object at key (nil when it
// was deleted), unless it is of the UID the loop deleted.
func (h *loopHandler[T]) seen(key string, obj runtime.Object) {
	h.seenVersion(key, obj)
	if obj == nil {
		delete(h.gone, key)
		delete(h.live, key)
		return
	}
	if uid, ok := h.gone[key]; ok {
		if uidOf(obj) == uid {
			return // the object the loop deleted, not gone yet
		}
		delete(h.gone, key)
	}
	h.live[key] = obj
}

// uidOf returns obj's UID, "" if it has none.
func uidOf(obj runtime.Object) types.UID {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetUID()
}

// hasObjects tells whether an object of this registration (its field
// manager's label) names the owner at key in AnnotationOwner, of any UID:
// one a full resync that puts nothing for the owner would delete.
func (h *loopHandler[T]) hasObjects(key string) bool {
	for _, obj := range h.live {
		m, err := meta.Accessor(obj)
		if err != nil || m.GetLabels()[kubedescriptor.LabelManagedBy] != h.fieldManager {
			continue
		}
		if kind, owner, _, ok := parseOwner(obj); !ok || kind == h.build.ownerGVK.Kind && owner == key {
			return true // unreadable: counted, to be safe
		}
	}
	return false
}
