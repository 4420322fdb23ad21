package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func cmAt(uid types.UID, rv string, deleting bool, finalizers ...string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{UID: uid, ResourceVersion: rv, Finalizers: finalizers}}
	if deleting {
		now := metav1.Now()
		cm.DeletionTimestamp = &now
	}
	return cm
}

// TestOwnWritesSkipsOnlyCopiesOlderThanTheHandlersWrites pins which cached
// copies a pass is skipped for after the handlers wrote, and that a key is
// forgotten as soon as nothing can be stale any more.
func TestOwnWritesSkipsOnlyCopiesOlderThanTheHandlersWrites(t *testing.T) {
	const key = "ns/x"
	t.Run("an update", func(t *testing.T) {
		var o ownWrites
		o.wrote(key, cmAt("a", "5", false), cmAt("a", "7", false))
		if !o.stale(key, cmAt("a", "6", false)) {
			t.Error("a copy older than the write was not stale")
		}
		if o.stale(key, cmAt("a", "7", false)) {
			t.Error("the written version itself was stale")
		}
		if o.tracked.Load() != 0 || o.stale(key, cmAt("a", "6", false)) {
			t.Error("the key was not forgotten once the cache caught up")
		}
	})
	t.Run("the last finalizer removed, the object deleted", func(t *testing.T) {
		var o ownWrites
		// The API server answers with the stored version, finalizers gone.
		o.wrote(key, cmAt("a", "5", true, "x"), cmAt("a", "5", true))
		if !o.stale(key, cmAt("a", "5", true, "x")) {
			t.Error("the cached copy still holding the finalizer was not stale")
		}
		if o.stale(key, nil) || o.tracked.Load() != 0 {
			t.Error("the deletion did not end the skipping")
		}
	})
	t.Run("the last finalizer removed, the object still there", func(t *testing.T) {
		var o ownWrites
		// A Pod in its grace period: the write made a new version, and
		// later versions (status updates while it stops) are handled.
		o.wrote(key, cmAt("a", "5", true, "x"), cmAt("a", "6", true))
		if o.stale(key, cmAt("a", "8", true)) {
			t.Error("a later version of an object in its grace period was skipped")
		}
	})
	t.Run("a copy returned unchanged", func(t *testing.T) {
		var o ownWrites
		o.wrote(key, cmAt("a", "5", true), cmAt("a", "5", true))
		o.wrote(key, cmAt("a", "5", false), cmAt("a", "5", false))
		if o.tracked.Load() != 0 {
			t.Error("a pass that wrote nothing was remembered")
		}
	})
	t.Run("another object of that name", func(t *testing.T) {
		var o ownWrites
		o.wrote(key, cmAt("a", "5", false), cmAt("a", "9", false))
		if o.stale(key, cmAt("b", "6", false)) {
			t.Error("an object created again under the name was skipped")
		}
		o.wrote(key, cmAt("a", "5", false), cmAt("b", "9", false))
		if o.tracked.Load() != 0 {
			t.Error("an object of another UID was taken for a write")
		}
	})
	t.Run("resourceVersions that are not numbers", func(t *testing.T) {
		var o ownWrites
		o.wrote(key, cmAt("a", "x5", false), cmAt("a", "x7", false))
		if o.tracked.Load() != 0 || o.stale(key, cmAt("a", "x6", false)) {
			t.Error("a resourceVersion that is not a number was compared")
		}
	})
}
