package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// TestCarriedDeletionsTakeOnlyHeldUntoldDeletions: a delete event with the
// object's final state marks a known key for carrying; a relist's
// tombstone, a final state HeldDeletion refuses, a key the handlers are
// being told of, and a key the cache has again are not carried.
func TestCarriedDeletionsTakeOnlyHeldUntoldDeletions(t *testing.T) {
	c := &controller{opts: Options{HeldDeletion: func(l map[string]string) bool { return l["mine"] == "yes" }}}
	cm := func(name, mine string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "7", Labels: map[string]string{"mine": mine}}}
	}
	for _, k := range []string{"held", "tomb", "other", "telling", "again"} {
		c.known.add("ns/"+k, types.UID("uid-"+k))
	}
	c.recordHeldDeletion(cm("held", "yes"))
	c.recordHeldDeletion(cache.DeletedFinalStateUnknown{Key: "ns/tomb", Obj: cm("tomb", "yes")})
	c.recordHeldDeletion(cm("other", "no"))
	c.recordHeldDeletion(cm("telling", "yes"))
	c.known.keys["ns/telling"] = func(e knownKey) knownKey { e.telling = true; return e }(c.known.keys["ns/telling"])
	c.recordHeldDeletion(cm("again", "yes"))
	c.known.add("ns/again", "uid-again2") // created again: the cache has it
	c.recordHeldDeletion(cm("unknown", "yes"))

	got := c.known.heldUntold()
	if len(got) != 1 || got["ns/held"] != (carriedKey{uid: "uid-held", rv: "7"}) {
		t.Fatalf("carried %+v, want only ns/held (uid-held at resourceVersion 7)", got)
	}

	var d CarriedDeletions
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	d.put(gvk, got)
	next := &controller{}
	next.seedHeldDeletions(d.take(gvk))
	if again := d.take(gvk); len(again) != 0 {
		t.Fatalf("a second take got %+v: one factory tells", again)
	}
	if at := next.known.carriedAt("ns/held"); at != "7" {
		t.Fatalf("the next controller's gate would be told the deletion at %q, want 7", at)
	}
	if len(next.startKeys) != 1 || next.startKeys[0].key != "ns/held" {
		t.Fatalf("the next controller queues %+v at its start, want ns/held once", next.startKeys)
	}
}
