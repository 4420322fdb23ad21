package leader

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	admissionv1client "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
)

// The term fence of a term group (WithTermGroup): Leases that come and go,
// each held for one term, such as package shard's member Leases (every
// membership term has a Lease of its own). A binding per Lease would have
// to be installed before each Lease's first create and never removed (the
// API server stops its Lease informer once no binding with a Lease
// parameter is left, kubernetes#130887), so the group has one binding,
// whose paramRef selects the group's Leases by TermGroupLabel. The API
// server evaluates the policy once per Lease selected and refuses the
// create if any evaluation refuses: each Lease judges only the creates of
// its own term and admits the rest (TermPolicy). So:
//
//   - a create of a term whose Lease is released (no holder) or ended
//     (TermEndedLabel names its term) is refused by that Lease;
//   - with no Lease of the group at all, parameterNotFoundAction Deny
//     refuses every stamped create of the group;
//   - a create whose Lease is gone while other Leases of the group exist
//     is judged by none of them, and admitted. A group's Leases must
//     therefore outlive the longest a create of their term can be held in
//     the network: package shard deletes a member's Lease only a
//     retention period after its term was over (SharderOptions).

// TermGroupLabelValue is the TermLeaseLabel value of the creates of the
// term group namespace/group, and the TermGroupLabel value of its Leases:
// "namespace.group_group" (group without a trailing '-' or '.'), or, when
// that is no label value, "g_" and a hash. It contains '_', which no
// Lease's TermLeaseLabelValue does, so no Lease's binding selects a
// group's creates.
func TermGroupLabelValue(namespace, group string) string {
	v := namespace + "." + strings.Trim(group, "-.") + "_group"
	if len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	sum := sha256.Sum256([]byte(namespace + "/" + group))
	return "g_" + hex.EncodeToString(sum[:12])
}

// TermGroupBindingName is the name of the binding of TermPolicy to the
// term group namespace/group.
func TermGroupBindingName(namespace, group string) string {
	n := namespace + "." + strings.Trim(group, "-.") + ".group." + TermPolicyName
	if len(validation.IsDNS1123Subdomain(n)) == 0 {
		return n
	}
	sum := sha256.Sum256([]byte(namespace + "/" + group))
	return "g-" + hex.EncodeToString(sum[:12]) + ".group." + TermPolicyName
}

// TermGroupBinding returns the binding of TermPolicy to the term group
// namespace/group (WithTermGroup): it selects the creates stamped with the
// group's TermGroupLabelValue, takes every Lease of the namespace labelled
// TermGroupLabel with that value as a parameter, and denies when there is
// none (parameterNotFoundAction Deny, under the policy's Fail).
func TermGroupBinding(namespace, group string) *admissionv1.ValidatingAdmissionPolicyBinding {
	deny := admissionv1.DenyAction
	v := TermGroupLabelValue(namespace, group)
	return &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: TermGroupBindingName(namespace, group)},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: TermPolicyName,
			ParamRef: &admissionv1.ParamRef{Namespace: namespace, ParameterNotFoundAction: &deny,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{TermGroupLabel: v}}},
			MatchResources: &admissionv1.MatchResources{ObjectSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{TermLeaseLabel: v},
			}},
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
}

// InstallTermGroupPolicy creates TermPolicy and the binding of the term
// group namespace/group, or updates them to what this version writes. It
// needs what InstallTermPolicy needs.
func InstallTermGroupPolicy(ctx context.Context, c admissionv1client.AdmissionregistrationV1Interface, namespace, group string) error {
	return installTermPolicy(ctx, c, TermGroupBinding(namespace, group))
}

// CheckTermGroupPolicy is CheckTermPolicy for the term group
// namespace/group: a *TermPolicyError names the policy or the group's
// binding that is missing or does not refuse (its paramRef not selecting
// the group's Leases, or not denying when none is found, among what
// CheckTermPolicy names), or the API server's enforcement (the dry-run
// probe is refused by every Lease of the group, and by the binding when
// there is none).
func CheckTermGroupPolicy(ctx context.Context, c admissionv1client.AdmissionregistrationV1Interface, namespace, group string) error {
	return checkTermPolicy(ctx, c, namespace+"/"+group+" (term group)", TermGroupBinding(namespace, group), namespace, TermGroupLabelValue(namespace, group))
}
