package shard

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// heldBy remembers, for one term of the sharder, the member each object was
// last seen on (by UID), so that a write that drops the trail annotation
// together with the labels (a kubectl replace of a manifest that has
// neither) does not make an object its member still runs read as a new
// one: the object stays on the member this term saw it on, until that
// member releases it or is dead. A new term starts with no memory, so the
// write is caught only by the term that saw the object before it.
type heldBy struct {
	mu   sync.Mutex
	last map[objKey]heldObject
}

type heldObject struct {
	uid    types.UID
	member string
}

// note records what obj says of its member, and returns the member this
// term last saw obj on, "" when none (never seen on one, released, or
// another object under the key).
func (h *heldBy) note(k objKey, obj *metav1.PartialObjectMetadata, ring string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	prev := h.last[k]
	if prev.uid != obj.UID {
		prev = heldObject{}
	}
	tr := readTrail(obj.Annotations, ring)
	switch on := holder(obj.Labels, obj.Annotations, ring); {
	case tr.released:
		delete(h.last, k)
		return ""
	case on != "":
		if h.last == nil {
			h.last = map[objKey]heldObject{}
		}
		h.last[k] = heldObject{uid: obj.UID, member: on}
	}
	return prev.member
}

// forget drops what was remembered of key k's object (it is gone).
func (h *heldBy) forget(k objKey) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.last, k)
}
