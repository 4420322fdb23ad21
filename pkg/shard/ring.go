package shard

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/lariat-dev/lariat/pkg/leader"
)

// Kind is one sharded kind of a ring.
type Kind struct {
	// GVK is the kind whose objects are spread over the members.
	GVK schema.GroupVersionKind
	// Owner, when set, is the kind this kind's objects follow: an object
	// whose controlling owner reference is of this group and kind hashes
	// by its owner's key, so that it lands on the member that handles
	// its owner (a handler that reads its children from its own cache
	// finds them there). The zero value hashes by the object's own key.
	Owner schema.GroupKind
}

// Ring names a set of members and the kinds spread over them. The sharder
// and every member of one ring must be given the same Ring.
type Ring struct {
	// Name names the ring in labels and Lease names (a DNS label).
	Name string
	// Namespace holds the ring's Leases: the members' and the sharder's.
	Namespace string
	// Kinds are the sharded kinds.
	Kinds []Kind
	// MaxMemberLeaseDuration is the longest lease duration a member of
	// the ring may use (DefaultMaxMemberLeaseDuration when zero):
	// NewMember (and so Join) refuses a longer one. A sharder elected
	// after a member Lease was deleted (by hand, a cleanup script) never
	// saw it, so it cannot tell from the Lease until when that member may
	// still write; it keeps the objects that name the member for this
	// long after it first found the Lease missing (or first saw it not
	// naming its member), or for the member's own lease duration if its
	// ID marks a longer one (MemberID: a member of a Ring with a larger
	// maximum, during a rolling upgrade), the longest the member may
	// write after the deletion, and only then moves them.
	MaxMemberLeaseDuration time.Duration
}

// DefaultMaxMemberLeaseDuration is Ring.MaxMemberLeaseDuration's default:
// four times leader.DefaultLeaseDuration, room for members with slower
// timings, and the longest a new sharder keeps the objects of a member
// whose Lease it never saw.
const DefaultMaxMemberLeaseDuration = 4 * leader.DefaultLeaseDuration

// maxMemberLease returns r.MaxMemberLeaseDuration or its default.
func (r Ring) maxMemberLease() time.Duration {
	if r.MaxMemberLeaseDuration > 0 {
		return r.MaxMemberLeaseDuration
	}
	return DefaultMaxMemberLeaseDuration
}

// Validate tells whether r can be used: a valid name, a namespace, at least
// one kind, and no kind twice (one kind given twice with two owners would
// hash one object two ways).
func (r Ring) Validate() error {
	if err := ValidateRingName(r.Name); err != nil {
		return err
	}
	if errs := validation.IsDNS1123Label(r.Namespace); len(errs) > 0 {
		return fmt.Errorf("shard: ring %s: namespace %q: %v", r.Name, r.Namespace, errs)
	}
	if len(r.Kinds) == 0 {
		return fmt.Errorf("shard: ring %s has no kinds", r.Name)
	}
	if r.MaxMemberLeaseDuration < 0 {
		return fmt.Errorf("shard: ring %s: MaxMemberLeaseDuration %v is negative", r.Name, r.MaxMemberLeaseDuration)
	}
	seen := map[schema.GroupKind]bool{}
	for _, k := range r.Kinds {
		gk := k.GVK.GroupKind()
		if k.GVK.Kind == "" || k.GVK.Version == "" {
			return fmt.Errorf("shard: ring %s: kind %v lacks a version or kind", r.Name, k.GVK)
		}
		if seen[gk] {
			return fmt.Errorf("shard: ring %s: kind %v given twice", r.Name, gk)
		}
		seen[gk] = true
		if k.Owner.Kind == "" && k.Owner.Group != "" {
			return fmt.Errorf("shard: ring %s: kind %v: owner has a group but no kind", r.Name, gk)
		}
	}
	return nil
}

// HashKey returns the key obj of kind k is hashed by (the key Pick is given).
// Without an owner kind, or when obj has no controlling owner reference of
// that kind, it is obj's cache key ("namespace/name", or "name" for a
// cluster-scoped object). Otherwise it is the owner's cache key: obj's
// namespace and the owner's name when the owner kind is namespaced
// (ownerNamespaced; an owner reference cannot cross namespaces), the
// owner's name alone when it is cluster-scoped. The version of the owner
// reference's apiVersion is ignored: an object's identity is group, kind,
// namespace and name.
func HashKey(obj metav1.Object, k Kind, ownerNamespaced bool) string {
	if k.Owner.Kind != "" {
		if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			if err == nil && gv.Group == k.Owner.Group && ref.Kind == k.Owner.Kind {
				if ownerNamespaced && obj.GetNamespace() != "" {
					return obj.GetNamespace() + "/" + ref.Name
				}
				return ref.Name
			}
		}
	}
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}
