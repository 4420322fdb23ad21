package shard

import (
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestMemberIDIsALabelValueAndLeaseNamePart(t *testing.T) {
	id := MemberID("webapp-operator-7d9f8c6b5-x2x4q_0123456789ab")
	if errs := validation.IsValidLabelValue(id); len(errs) > 0 {
		t.Fatalf("member ID %q is not a label value: %v", id, errs)
	}
	if errs := validation.IsDNS1123Subdomain(MemberLeaseName("ring", id)); len(errs) > 0 {
		t.Fatalf("lease name: %v", errs)
	}
	if MemberID("a") == MemberID("b") {
		t.Fatal("two identities share an ID")
	}
}

// TestPickMovesAboutOneNth: adding a fourth member moves about a quarter of
// the keys, all of them to the new member; removing it moves them back.
func TestPickMovesAboutOneNth(t *testing.T) {
	three := []string{MemberID("a"), MemberID("b"), MemberID("c")}
	four := append([]string{MemberID("d")}, three...)
	const n = 20000
	moved, perMember := 0, map[string]int{}
	for i := range n {
		key := fmt.Sprintf("ns/obj-%d", i)
		before, after := Pick(key, three), Pick(key, four)
		perMember[before]++
		if before != after {
			moved++
			if after != four[0] {
				t.Fatalf("%s moved from %s to %s, not to the new member", key, before, after)
			}
		}
		if Pick(key, three) != before {
			t.Fatal("Pick is not deterministic")
		}
	}
	if moved < n/4-n/20 || moved > n/4+n/20 {
		t.Errorf("a fourth member took %d of %d keys, want about %d", moved, n, n/4)
	}
	for m, c := range perMember {
		if c < n/3-n/20 || c > n/3+n/20 {
			t.Errorf("member %s got %d of %d keys, want about %d", m, c, n, n/3)
		}
	}
	if Pick("k", nil) != "" {
		t.Error("Pick with no members returned a member")
	}
}

func TestValidateRingName(t *testing.T) {
	if err := ValidateRingName("webapps"); err != nil {
		t.Error(err)
	}
	if err := ValidateRingName("Web_Apps"); err == nil {
		t.Error("an invalid ring name was accepted")
	}
}

// TestMemberIDMarksTheLeaseDuration: a member's identity marks its lease
// duration (whole seconds, rounded up) and its ID carries the mark, a
// label value and a Lease name part still; an ID without the mark (a
// member built before it, or by hand) or with a malformed one marks none.
func TestMemberIDMarksTheLeaseDuration(t *testing.T) {
	long := markLease("webapp-operator-7d9f8c6b5-x2x4q_0123456789ab", 1234567*time.Second)
	for _, c := range []struct {
		identity string
		want     time.Duration
	}{
		{markLease("pod_0123456789ab", 15*time.Second), 15 * time.Second},
		{markLease("pod_0123456789ab", 1500*time.Millisecond), 2 * time.Second},
		{long, 1234567 * time.Second},
		{"pod_0123456789ab", 0},
		{"pod_0123456789ab_l", 0},
		{"pod_0123456789ab_l07", 0},
		{"pod_0123456789ab_l12345678", 0},
		{"pod_0123456789ab_l4x", 0},
	} {
		id := MemberID(c.identity)
		if got := idLease(id); got != c.want {
			t.Errorf("identity %q: ID %q marks %v, want %v", c.identity, id, got, c.want)
		}
		if errs := validation.IsValidLabelValue(id); len(errs) > 0 {
			t.Errorf("member ID %q is not a label value: %v", id, errs)
		}
		if errs := validation.IsDNS1123Subdomain(MemberLeaseName("ring", id)); len(errs) > 0 {
			t.Errorf("lease name of %q: %v", id, errs)
		}
	}
	if MemberID(markLease("a", time.Second)) == MemberID(markLease("a", 2*time.Second)) {
		t.Error("two lease durations of one identity share an ID")
	}
}

// TestReleaseIsProvenOnlyByItsMembersSecret: a member's ID carries the
// hash of its release proof, a release labelled with that proof is the
// member's own, one without it or with another secret is an edit, and an
// ID without the mark (an earlier Lariat's member) is believed as before.
func TestReleaseIsProvenOnlyByItsMembersSecret(t *testing.T) {
	proof, mark, err := newReleaseProof()
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := newReleaseProof()
	if err != nil {
		t.Fatal(err)
	}
	id := MemberID(markLease("pod_0123456789ab"+identityReleaseMark+mark, 15*time.Second))
	if got := releaseMarked(id, idReleaseMark, idLeaseMark); got != mark {
		t.Fatalf("ID %q marks release %q, want %q", id, got, mark)
	}
	if got := idLease(id); got != 15*time.Second {
		t.Errorf("ID %q marks lease %v, want 15s", id, got)
	}
	if errs := validation.IsValidLabelValue(id); len(errs) > 0 {
		t.Errorf("member ID %q is not a label value: %v", id, errs)
	}
	lease := func(labels map[string]string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Labels: labels}}
	}
	for _, c := range []struct {
		name   string
		id     string
		labels map[string]string
		want   bool
	}{
		{"the member's proof", id, map[string]string{ReleaseProofLabel: proof}, true},
		{"no proof", id, nil, false},
		{"another secret", id, map[string]string{ReleaseProofLabel: other}, false},
		{"the mark itself", id, map[string]string{ReleaseProofLabel: mark}, false},
		{"an ID without the mark", MemberID(markLease("pod_0123456789ab", 15*time.Second)), nil, true},
	} {
		if got := releaseProven(lease(c.labels), c.id); got != c.want {
			t.Errorf("%s: releaseProven = %v, want %v", c.name, got, c.want)
		}
	}
}
