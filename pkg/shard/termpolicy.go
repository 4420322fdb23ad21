package shard

import (
	"context"
	"fmt"

	admissionv1client "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"

	"github.com/lariat-dev/lariat/pkg/leader"
)

// TermGroup returns the term group (leader.WithTermGroup) of ring's member
// Leases: MemberLeaseName(ring, ""). Every membership term has a Lease of its own, so one binding,
// leader.TermGroupBinding(namespace, TermGroup(ring)), judges the creates
// of every member of the ring by the member Leases it selects.
func TermGroup(ring string) string { return MemberLeaseName(ring, "") }

// InstallTermPolicy creates (or updates) leader.TermPolicy and the binding
// of ring's member Leases (leader.InstallTermGroupPolicy), so that the API
// server refuses a member's create that reaches it after the member's term
// ended (its Lease released, or ended by the sharder before it moved the
// member's objects). It needs what leader.InstallTermPolicy needs. Install
// it once and leave it: see docs/replicas.md.
func InstallTermPolicy(ctx context.Context, c admissionv1client.AdmissionregistrationV1Interface, ring Ring) error {
	if err := leader.InstallTermGroupPolicy(ctx, c, ring.Namespace, TermGroup(ring.Name)); err != nil {
		return fmt.Errorf("shard: ring %s: %w", ring.Name, err)
	}
	return nil
}

// CheckTermPolicy returns a *leader.TermPolicyError naming what of ring's
// term fence is missing, does not refuse, or is not enforced by the API
// server (leader.CheckTermGroupPolicy), another error if it could not be
// read, nil if it is installed and enforced.
func CheckTermPolicy(ctx context.Context, c admissionv1client.AdmissionregistrationV1Interface, ring Ring) error {
	if err := leader.CheckTermGroupPolicy(ctx, c, ring.Namespace, TermGroup(ring.Name)); err != nil {
		return fmt.Errorf("shard: ring %s: %w", ring.Name, err)
	}
	return nil
}
