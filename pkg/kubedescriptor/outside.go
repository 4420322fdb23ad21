package kubedescriptor

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// This file judges drift in the fields no field manager owns.
//
// The owned fields (owned.go) miss a field the server writes from another
// the descriptor sets: a Secret's stringData is folded into data, and the
// server records the descriptor's Apply entry as owning stringData only,
// while data is owned by nobody (or, once edited, by the editor). A user
// who changes data.password leaves every owned field as it was stored.
//
// Treating unowned fields as the descriptor's would take over what other
// managers write. Instead, when the object was written by someone else
// since the descriptor last saw it hold its value (its resourceVersion is
// past the one recorded), a server-side dry run of the applied value asks
// what an apply would change: if the result differs from the live object
// outside metadata and status, the apply would write something, and the
// object has drifted. An apply (forced, as every apply of the
// descriptor) writes only what applying its value writes anyway; fields
// other managers own and the value does not produce stay as they are.
// The verdict is kept for that resourceVersion, so one outside write costs
// one request, and the object's own applies (whose resourceVersion is
// recorded) cost none.

// writtenSince tells whether live, the object st records, was written
// since st last saw it hold the applied value: its resourceVersion is
// later than the one recorded (or another, when the versions are not
// numbers). A state without a resourceVersion judges nothing here.
func (st *appliedState) writtenSince(live metav1.Object) bool {
	if st.syncedAt == "" || live.GetUID() != st.uid || live.GetResourceVersion() == st.syncedAt {
		return false
	}
	c, err := resourceversion.CompareResourceVersion(live.GetResourceVersion(), st.syncedAt)
	return err != nil || c > 0
}

// recheck asks the server, with a dry run of st's value, whether live (at
// key, written by someone else since st saw it in sync) still holds what
// applying that value stores, and records the verdict at live's
// resourceVersion. A dry run that fails judges nothing: st stands.
func (k *kind) recheck(ctx context.Context, key string, st *appliedState, live metav1.Object, obj runtime.Object) *appliedState {
	if st.driftedAt != "" && st.driftedAt == live.GetResourceVersion() {
		return st
	}
	result, err := k.patch(ctx, key, st.value, true)
	if err != nil {
		return st
	}
	next := *st
	if rm, err := meta.Accessor(result); err != nil || rm.GetUID() != live.GetUID() {
		return st
	}
	if sameOutsideMeta(result, obj) {
		next.syncedAt, next.driftedAt = live.GetResourceVersion(), ""
	} else {
		next.driftedAt = live.GetResourceVersion()
	}
	k.applied.put(key, &next)
	return &next
}

// sameOutsideMeta tells whether a and b hold the same values outside
// metadata and status: metadata the descriptor sets is owned and judged
// by the owned fields (a cache may keep only part of the rest), and an
// apply never writes status.
func sameOutsideMeta(a, b runtime.Object) bool {
	am, err1 := runtime.DefaultUnstructuredConverter.ToUnstructured(a)
	bm, err2 := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if err1 != nil || err2 != nil {
		return false
	}
	for _, m := range []map[string]any{am, bm} {
		delete(m, "metadata")
		delete(m, "status")
		delete(m, "apiVersion")
		delete(m, "kind")
	}
	return jsonEqual(am, bm)
}
