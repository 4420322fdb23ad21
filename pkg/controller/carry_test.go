package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// TestCarriedDeletionsCarryEveryHeldKeyNotToldOf: a factory hands over
// every known key with what judges it: a delete event with a final state
// HeldDeletion accepts (at its resourceVersion), a key being told (its
// pass may still fail with the ended term's context), a relist's
// tombstone, a key the cache has (again) and one whose deletion its
// informer never saw (at the resourceVersion its cache last had). A final
// state HeldDeletion refuses (a move away), an unknown key and a key with
// nothing to judge it by are not carried.
func TestCarriedDeletionsCarryEveryHeldKeyNotToldOf(t *testing.T) {
	held := func(l map[string]string) bool { return l["mine"] == "yes" }
	c := &controller{opts: Options{HeldDeletion: held}}
	cm := func(name, mine string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "7", Labels: map[string]string{"mine": mine}}}
	}
	for _, k := range []string{"held", "tomb", "other", "telling", "again", "unseen"} {
		c.known.add("ns/"+k, types.UID("uid-"+k), "3")
	}
	c.known.add("ns/nothing", "uid-nothing", "")
	c.recordHeldDeletion(cm("held", "yes"))
	c.recordHeldDeletion(cache.DeletedFinalStateUnknown{Key: "ns/tomb", Obj: cm("tomb", "yes")})
	c.recordHeldDeletion(cm("other", "no"))
	c.recordHeldDeletion(cm("telling", "yes"))
	c.known.keys["ns/telling"] = func(e knownKey) knownKey { e.telling = true; return e }(c.known.keys["ns/telling"])
	c.recordHeldDeletion(cm("again", "yes"))
	c.known.add("ns/again", "uid-again2", "9") // created again: the cache has it
	c.recordHeldDeletion(cm("unknown", "yes"))

	got := c.known.heldKeys(held)
	want := map[string]carriedKey{
		"ns/held":    {uid: "uid-held", rv: "7", lastRV: "3"},
		"ns/tomb":    {uid: "uid-tomb", lastRV: "3"},
		"ns/telling": {uid: "uid-telling", rv: "7", lastRV: "3"},
		"ns/again":   {uid: "uid-again2", lastRV: "9"},
		"ns/unseen":  {uid: "uid-unseen", lastRV: "3"},
	}
	if len(got) != len(want) {
		t.Fatalf("carried %+v, want %+v", got, want)
	}
	for key, w := range want {
		g, ok := got[key]
		if !ok || g.uid != w.uid || g.rv != w.rv || g.lastRV != w.lastRV || g.held == nil {
			t.Fatalf("carried %s as %+v (ok %v), want %+v with the HeldDeletion", key, g, ok, w)
		}
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
	if rv, h := next.known.carriedSince("ns/held"); rv != "" || h != nil {
		t.Fatalf("a carried delete event is judged at its resourceVersion, not by history since %q", rv)
	}
	rv, h := next.known.carriedSince("ns/unseen")
	if rv != "3" || h == nil || !h(map[string]string{"mine": "yes"}) || h(map[string]string{"mine": "no"}) {
		t.Fatalf("the next controller's gate would judge ns/unseen since %q with %v, want since 3 with the earlier HeldDeletion", rv, h != nil)
	}
	if len(next.startKeys) != len(want) {
		t.Fatalf("the next controller queues %+v at its start, want each carried key once", next.startKeys)
	}
	next.known.add("ns/unseen", "uid-unseen", "11") // its list has it
	if rv, _ := next.known.carriedSince("ns/unseen"); rv != "" {
		t.Fatalf("a carried key the next list has is still judged by history since %q", rv)
	}
}
