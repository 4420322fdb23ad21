package dependents

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// claimer says, for an object an owner returns, whether the owner may have
// it put into the scheduler. Two owners of one registration returning an
// object of the same name would share one scheduler key: the second would
// overwrite the first's object and delete it when it goes. The first to
// claim it keeps it (the loop's picture, or the owner named in the live
// object's AnnotationOwner); the other is told so, FAILED, and its claim
// is never put, so it never deletes it either. A live object left by an
// owner that no longer exists (deleted, or deleted and created again
// under the same name while no replica ran: another UID) is not inherited:
// it is not put, so the scheduler deletes it (its resync, or the delete
// the old owner's withdrawal already sent), and the owner's own object is
// created once the loop sees it gone.
type claimer struct {
	ownerKind string
	childOf   map[string]string         // object key -> owner key
	live      map[string]runtime.Object // object key -> object on the server
	ownerUID  func(ownerKey string) (string, bool)
}

// claim returns why the owner at ownerKey (UID uid) may not put the object
// at objKey: contested when another owner keeps it, stale when the live
// object is a deleted owner's; both empty when it may.
func (c claimer) claim(ownerKey, uid, objKey string) (contested, stale string) {
	if other := c.childOf[objKey]; other != "" && other != ownerKey {
		return fmt.Sprintf("it is %s %s's", c.ownerKind, other), ""
	}
	live := c.live[objKey]
	if live == nil {
		return "", ""
	}
	kind, liveOwner, liveUID, ok := parseOwner(live)
	if !ok || kind != c.ownerKind {
		// Not one of this registration's: the descriptor never takes over
		// an object another field manager created.
		return "", ""
	}
	if liveOwner == ownerKey && liveUID == uid {
		return "", ""
	}
	if cur, exists := c.ownerUID(liveOwner); exists && cur == liveUID {
		return fmt.Sprintf("it is %s %s's", c.ownerKind, liveOwner), ""
	}
	return "", fmt.Sprintf("left by deleted %s %s (UID %s), deleted first", c.ownerKind, liveOwner, liveUID)
}

// parseOwner reads AnnotationOwner ("Kind namespace/name UID") of obj.
func parseOwner(obj runtime.Object) (kind, ownerKey, uid string, ok bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", "", "", false
	}
	f := strings.Fields(m.GetAnnotations()[AnnotationOwner])
	if len(f) != 3 {
		return "", "", "", false
	}
	return f[0], f[1], f[2], true
}
