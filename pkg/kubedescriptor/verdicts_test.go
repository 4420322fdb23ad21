package kubedescriptor

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A verdict outlives its object only until the next full list: the
// verdicts of objects gone (or no longer labelled) are dropped, so an
// operator whose users copy and delete many objects holds no memory for
// them.
func TestVerdictsOfObjectsGoneAreDropped(t *testing.T) {
	var v verdicts
	kept := &metav1.ObjectMeta{UID: "u1", ResourceVersion: "1"}
	gone := &metav1.ObjectMeta{UID: "u2", ResourceVersion: "1"}
	v.put("core/ConfigMap/ns/kept", kept, false)
	v.put("core/ConfigMap/ns/gone", gone, true)

	v.keepOnly(map[string]bool{"core/ConfigMap/ns/kept": true})

	if _, ok := v.get("core/ConfigMap/ns/gone", gone); ok {
		t.Fatalf("the verdict on core/ConfigMap/ns/gone outlived a full list without it: %v", v.seen)
	}
	if ours, ok := v.get("core/ConfigMap/ns/kept", kept); !ok || ours {
		t.Fatalf("the verdict on core/ConfigMap/ns/kept, listed, was lost or changed: ours=%v ok=%v", ours, ok)
	}
	if len(v.seen) != 1 {
		t.Fatalf("verdicts hold %d entries after a list of one object, want 1: %v", len(v.seen), v.seen)
	}
}
