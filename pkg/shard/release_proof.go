package shard

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// A member's own release, told from an edit of the same shape.
//
// client-go releases a Lease by clearing its holder and setting
// leaseDurationSeconds to 1, after the member's work stopped; the sharder
// then moves the member's objects at once. Anyone allowed to update Leases
// can write that shape by hand, and a sharder that believed it would move
// the objects of a member that still runs. So a member draws a secret
// (the release proof) when it is built, its identity and ID carry the
// secret's hash (the release mark), and its release alone writes the
// secret into ReleaseProofLabel (leader.WithReleaseLabels). A release
// whose proof does not hash to its ID's mark is an edit, judged as a
// holder cleared by hand: from the last copy that named the member, or,
// unseen, for the longest a member may write. The secret is public once
// released, when it no longer proves anything: an ID is never in a second
// term.

// ReleaseProofLabel is the label a member's release writes on its Lease:
// the secret whose hash the member's ID carries (MemberID).
const ReleaseProofLabel = "shard.lariat.dev/release-proof"

// The marks of a member's release proof in its identity and its ID, and
// the mark's length in hex digits.
const (
	identityReleaseMark = "_r"
	idReleaseMark       = "-r"
	releaseMarkLen      = 16
)

// newReleaseProof returns a new secret for a member's release and its
// mark.
func newReleaseProof() (proof, mark string, err error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	proof = hex.EncodeToString(b[:])
	return proof, releaseMarkOf(proof), nil
}

// releaseMarkOf returns the mark of release proof proof.
func releaseMarkOf(proof string) string {
	sum := sha256.Sum256([]byte(proof))
	return hex.EncodeToString(sum[:releaseMarkLen/2])
}

// releaseMarked returns the release mark at the end of identity or ID s,
// before its lease mark (leaseMarked), or "" when it has none (a member
// built before the mark, or by hand).
func releaseMarked(s, mark, leaseMark string) string {
	if leaseMarked(s, leaseMark) != "" {
		s = s[:strings.LastIndex(s, leaseMark)]
	}
	i := len(s) - len(mark) - releaseMarkLen
	if i < 0 || s[i:i+len(mark)] != mark {
		return ""
	}
	m := s[i+len(mark):]
	if strings.Trim(m, "0123456789abcdef") != "" {
		return ""
	}
	return m
}

// releaseProven reports whether Lease l of the member with ID id carries
// the proof of that member's own release. An ID without a release mark (a
// member of an earlier Lariat) proves nothing, and its release is
// believed, as it was before the mark.
func releaseProven(l *coordinationv1.Lease, id string) bool {
	mark := releaseMarked(id, idReleaseMark, idLeaseMark)
	if mark == "" {
		return true
	}
	proof, ok := l.Labels[ReleaseProofLabel]
	return ok && releaseMarkOf(proof) == mark
}
