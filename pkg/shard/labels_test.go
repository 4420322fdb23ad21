package shard

import (
	"fmt"
	"testing"

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
