package shard

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestNewMemberRefusesALeaseLongerThanTheRingsMaximum: a sharder that never
// saw a member's Lease keeps its objects only Ring.MaxMemberLeaseDuration,
// so a member with a longer lease duration is refused, naming both, and
// one within it (the default, or a raised maximum) is accepted.
func TestNewMemberRefusesALeaseLongerThanTheRingsMaximum(t *testing.T) {
	leases := fake.NewClientset().CoordinationV1()
	ring := Ring{Name: "maxlease", Namespace: "default", Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	long := []leader.Option{leader.WithLeaseDuration(DefaultMaxMemberLeaseDuration + time.Second), leader.WithRenewDeadline(DefaultMaxMemberLeaseDuration)}
	_, err := NewMember(leases, ring, long...)
	if err == nil || !strings.Contains(err.Error(), "MaxMemberLeaseDuration") || !strings.Contains(err.Error(), (DefaultMaxMemberLeaseDuration+time.Second).String()) {
		t.Errorf("NewMember with a lease of %v on a ring with the default maximum %v: %v, want an error naming both", DefaultMaxMemberLeaseDuration+time.Second, DefaultMaxMemberLeaseDuration, err)
	}
	if _, err := NewMember(leases, ring, leader.WithLeaseDuration(DefaultMaxMemberLeaseDuration), leader.WithRenewDeadline(DefaultMaxMemberLeaseDuration-time.Second)); err != nil {
		t.Errorf("NewMember with a lease of the ring's maximum: %v", err)
	}
	if _, err := NewMember(leases, ring); err != nil {
		t.Errorf("NewMember with the default lease: %v", err)
	}
	ring.MaxMemberLeaseDuration = 2 * DefaultMaxMemberLeaseDuration
	if _, err := NewMember(leases, ring, long...); err != nil {
		t.Errorf("NewMember with a lease of %v on a ring whose maximum is %v: %v", DefaultMaxMemberLeaseDuration+time.Second, ring.MaxMemberLeaseDuration, err)
	}
	ring.MaxMemberLeaseDuration = -time.Second
	if err := ring.Validate(); err == nil {
		t.Errorf("a ring with a negative MaxMemberLeaseDuration was valid")
	}
}
