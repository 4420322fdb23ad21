package shard

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	// AssignmentLabelPrefix, followed by the ring's name, is the label
	// whose value is the ID of the member an object is assigned to. An
	// object without it is assigned to nobody yet.
	AssignmentLabelPrefix = "shard.lariat.dev/"
	// DrainLabelPrefix, followed by the ring's name, is the label the
	// sharder sets (to "true") to ask the assigned member to release an
	// object; the member acknowledges by removing both labels and
	// writing its release into the trail (TrailAnnotationPrefix).
	DrainLabelPrefix = "drain.shard.lariat.dev/"
	// TrailAnnotationPrefix, followed by the ring's name, is the
	// annotation that records who the protocol last gave an object to:
	// the ID of the member the sharder assigned it to (or that claimed an
	// object labelled for it that had no trail yet), or, once that member
	// acknowledged a drain, "released:" ID "@" the resourceVersion it let
	// go of. The labels say who handles an object; the trail says whether
	// the protocol put them there: a label written by anyone else (a
	// user's replace that drops it, a saved manifest that carries an old
	// assignment) moves nothing, since members and sharder go by the
	// trail until its member acknowledged or is dead (docs/replicas.md).
	TrailAnnotationPrefix = "trail.shard.lariat.dev/"
	// RingLabel is set on every member Lease, to the ring's name, so that
	// the sharder can list the members.
	RingLabel = "shard.lariat.dev/ring"
)

// AssignmentLabel returns the assignment label of ring.
func AssignmentLabel(ring string) string { return AssignmentLabelPrefix + ring }

// DrainLabel returns the drain label of ring.
func DrainLabel(ring string) string { return DrainLabelPrefix + ring }

// TrailAnnotation returns the trail annotation of ring.
func TrailAnnotation(ring string) string { return TrailAnnotationPrefix + ring }

// releasedPrefix starts the trail of an object its member let go of.
const releasedPrefix = "released:"

// trail is what an object's trail annotation says: the member the
// protocol last gave it to, and whether that member released it. The
// zero trail is none: an object created with the assignment label, or
// one assigned before the trail existed.
type trail struct {
	member   string
	released bool
}

// readTrail reads ring's trail from an object's annotations.
func readTrail(annotations map[string]string, ring string) trail {
	v := annotations[TrailAnnotation(ring)]
	if rest, ok := strings.CutPrefix(v, releasedPrefix); ok {
		id, _, _ := strings.Cut(rest, "@")
		return trail{member: id, released: true}
	}
	return trail{member: v}
}

// releasedTrail is the trail a member writes when it acknowledges the
// drain of the version resourceVersion: the version is there for people
// reading it; the release is evidence because only the member's gate
// writes it, conditionally on that version.
func releasedTrail(id, resourceVersion string) string {
	return releasedPrefix + id + "@" + resourceVersion
}

// ValidateRingName tells whether ring can name a ring: it is used as a label
// name (after the prefixes above) and in Lease names, so it must be a DNS
// label.
func ValidateRingName(ring string) error {
	if errs := validation.IsDNS1123Label(ring); len(errs) > 0 {
		return fmt.Errorf("shard: ring name %q: %v", ring, errs)
	}
	return nil
}

// MemberID returns the short, stable ID a member with identity goes by in
// labels and Lease names. Identities (a pod name and a random suffix, see
// leader.DefaultIdentity) may be longer than a label value allows and hold
// characters a Lease name does not, so the ID is a hash of the identity;
// the member Lease's holder field keeps the identity for people to read.
// An identity that ends with the lease duration its member runs with
// (NewMember's: "_l" and whole seconds) gives an ID that ends with it too
// ("-l" and the seconds), so that the sharder knows from an object's label
// alone how long that member may write after its last renewal
// (docs/replicas.md, "A member's lease duration is in its ID"); before it,
// an identity's release mark (NewMember's: "_r" and 16 hex digits, the
// hash of the secret only the member's release reveals, see
// release_proof.go) is kept as "-r" and the digits.
func MemberID(identity string) string {
	sum := sha256.Sum256([]byte(identity))
	id := hex.EncodeToString(sum[:8])
	if r := releaseMarked(identity, identityReleaseMark, identityLeaseMark); r != "" {
		id += idReleaseMark + r
	}
	if n := leaseMarked(identity, identityLeaseMark); n != "" {
		id += idLeaseMark + n
	}
	return id
}

// The marks of a member's lease duration at the end of its identity and
// of its ID.
const (
	identityLeaseMark = "_l"
	idLeaseMark       = "-l"
)

// markLease returns identity with lease duration d marked at its end, in
// whole seconds rounded up (a Lease holds whole seconds, and the mark must
// not promise less than the member uses).
func markLease(identity string, d time.Duration) string {
	return identity + identityLeaseMark + strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}

// leaseMarked returns the seconds marked at the end of s after mark, or
// "" when there are none (an identity or ID of a member built before the
// mark, or by hand): a decimal number without a leading zero, of at most
// seven digits.
func leaseMarked(s, mark string) string {
	i := strings.LastIndex(s, mark)
	if i < 0 {
		return ""
	}
	n := s[i+len(mark):]
	if n == "" || len(n) > 7 || n[0] == '0' || strings.Trim(n, "0123456789") != "" {
		return ""
	}
	return n
}

// idLease returns the lease duration member ID id marks, zero when it
// marks none.
func idLease(id string) time.Duration {
	n, err := strconv.Atoi(leaseMarked(id, idLeaseMark))
	if err != nil {
		return 0
	}
	return time.Duration(n) * time.Second
}

// MemberLeaseName returns the name of the Lease through which the member
// with ID id belongs to ring.
func MemberLeaseName(ring, id string) string { return ring + "-member-" + id }

// SharderLeaseName returns the name of the Lease that elects ring's sharder.
func SharderLeaseName(ring string) string { return ring + "-sharder" }

// Pick returns the member of members that an object with hash key key is
// assigned to, by rendezvous (highest random weight) hashing: every member
// scores the key and the highest score wins, so when a member joins or
// leaves only the keys it wins or held move (about 1/N of them), and every
// sharder computes the same answer from the same members. It returns ""
// when members is empty. The hash is SHA-256, not a seeded one like
// hash/maphash, because two sharders in two processes must agree.
func Pick(key string, members []string) string {
	var best string
	var bestScore uint64
	for _, m := range members {
		h := sha256.New()
		h.Write([]byte(m))
		h.Write([]byte{0})
		h.Write([]byte(key))
		var sum [sha256.Size]byte
		score := binary.BigEndian.Uint64(h.Sum(sum[:0]))
		if best == "" || score > bestScore || (score == bestScore && m < best) {
			best, bestScore = m, score
		}
	}
	return best
}
