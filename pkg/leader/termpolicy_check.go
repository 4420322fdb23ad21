package leader

import (
	"context"
	"fmt"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	admissionv1client "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
)

// TermPolicyError says that the term fence of a Lease is not installed:
// creates stamped with its terms are not checked by the API server, so a
// create that stalled in the network may land after the term.
type TermPolicyError struct {
	// Lease is namespace/name.
	Lease string
	// Missing names each object missing or not as InstallTermPolicy
	// writes it, as "ValidatingAdmissionPolicy NAME" or
	// "ValidatingAdmissionPolicyBinding NAME"; or, when both are as
	// written but the API server admits what they refuse, "enforcement by
	// the API server (...)", naming the admission plugin it does not run.
	Missing []string
}

// Error names what is missing.
func (e *TermPolicyError) Error() string {
	if len(e.Missing) == 1 && e.Missing[0] == notEnforced {
		return fmt.Sprintf("leader: creates fenced by Lease %s are not checked by the API server: missing %s", e.Lease, notEnforced)
	}
	return fmt.Sprintf("leader: creates fenced by Lease %s are not checked by the API server: missing %s (install them with leader.InstallTermPolicy)",
		e.Lease, strings.Join(e.Missing, ", "))
}

// CheckTermPolicy returns a *TermPolicyError naming the policy or binding
// of the Lease namespace/name that is missing or not as InstallTermPolicy
// writes it, in what decides whether a stale create is refused, or the
// API server's enforcement when it admits a create they refuse; another
// error if they could not be read or the enforcement could not be asked
// (it needs get on both kinds, and create on leases in namespace), nil if
// the fence is installed and enforced.
//
// An object that exists but does not refuse is as bad as a missing one: a
// binding that only warns or audits, or whose selectors narrow it away
// from the stamped creates, or a policy whose check, failure policy or
// matching was changed, lets every stale create through while the fence
// looks installed. So the policy must have TermPolicy's validation,
// variables, paramKind, failurePolicy Fail and matching (nothing excluded,
// no matchConditions); the binding must name the policy and the Lease
// with parameterNotFoundAction Deny, deny (validationActions holds Deny),
// and select the Lease's stamped creates and nothing narrower. What the
// API server defaults (empty selectors, matchPolicy) is accepted.
//
// Objects as written prove nothing on an API server that does not run
// admission policies (termpolicy_probe.go): once both are, CheckTermPolicy
// sends a dry-run create of a Lease stamped with a term the Lease is
// never in, and the term policy must refuse it. A policy installed
// moments ago is enforced once the API server's informers have it, so an
// admitted probe is sent again, backing off, for up to a minute (or until
// ctx ends) before the enforcement is named missing.
func CheckTermPolicy(ctx context.Context, c admissionv1client.AdmissionregistrationV1Interface, namespace, name string) error {
	return checkTermPolicy(ctx, c, namespace+"/"+name, TermPolicyBinding(namespace, name), namespace, TermLeaseLabelValue(namespace, name))
}

// checkTermPolicy is CheckTermPolicy of the binding want, for the creates
// stamped with the TermLeaseLabel value stamp (the probe is sent in
// namespace); lease names them in the error.
func checkTermPolicy(ctx context.Context, c admissionv1client.AdmissionregistrationV1Interface, lease string,
	want *admissionv1.ValidatingAdmissionPolicyBinding, namespace, stamp string) error {
	var missing []string
	p, err := c.ValidatingAdmissionPolicies().Get(ctx, TermPolicyName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		missing = append(missing, "ValidatingAdmissionPolicy "+TermPolicyName)
	case err != nil:
		return fmt.Errorf("leader: read ValidatingAdmissionPolicy %s: %w", TermPolicyName, err)
	default:
		if why := policyDiffers(p); why != "" {
			missing = append(missing, "ValidatingAdmissionPolicy "+TermPolicyName+" ("+why+")")
		}
	}
	b, err := c.ValidatingAdmissionPolicyBindings().Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		missing = append(missing, "ValidatingAdmissionPolicyBinding "+want.Name)
	case err != nil:
		return fmt.Errorf("leader: read ValidatingAdmissionPolicyBinding %s: %w", want.Name, err)
	default:
		if why := bindingDiffersFrom(b, want); why != "" {
			missing = append(missing, "ValidatingAdmissionPolicyBinding "+want.Name+" ("+why+")")
		}
	}
	if len(missing) > 0 {
		return &TermPolicyError{Lease: lease, Missing: missing}
	}
	enforced, err := probeEnforced(ctx, c.RESTClient(), namespace, stamp)
	switch {
	case err != nil:
		return err
	case !enforced:
		return &TermPolicyError{Lease: lease, Missing: []string{notEnforced}}
	}
	return nil
}

// policyDiffers says how p differs from TermPolicy in what decides
// whether a stale create is refused ("" if it does not).
func policyDiffers(p *admissionv1.ValidatingAdmissionPolicy) string {
	want := TermPolicy().Spec
	got := p.Spec
	switch {
	case got.FailurePolicy == nil || *got.FailurePolicy != admissionv1.Fail:
		return "its failurePolicy is not Fail"
	case got.ParamKind == nil || *got.ParamKind != *want.ParamKind:
		return "its paramKind is not coordination.k8s.io/v1 Lease"
	case !slices.EqualFunc(got.Validations, want.Validations, func(a, b admissionv1.Validation) bool {
		return a.Expression == b.Expression
	}):
		return "its validations are not the term check"
	case !slices.Equal(got.Variables, want.Variables):
		return "its variables are not the term check's"
	case len(got.MatchConditions) > 0:
		return "it has matchConditions"
	}
	return matchDiffers(got.MatchConstraints, want.MatchConstraints)
}

// matchDiffers says how the policy's match constraints differ from
// want's ("" if they do not).
func matchDiffers(got, want *admissionv1.MatchResources) string {
	switch {
	case got == nil:
		return "it has no matchConstraints"
	case len(got.ExcludeResourceRules) > 0:
		return "its matchConstraints exclude resources"
	case !emptySelector(got.NamespaceSelector):
		return "its matchConstraints select namespaces"
	case !equalSelector(got.ObjectSelector, want.ObjectSelector):
		return "its objectSelector is not the term label's"
	case !slices.EqualFunc(got.ResourceRules, want.ResourceRules, equalRule):
		return "its resourceRules are not every create"
	}
	return ""
}

// bindingDiffers says how b differs from TermPolicyBinding(namespace,
// name) in what decides whether a stale create is refused ("" if not).
func bindingDiffers(b *admissionv1.ValidatingAdmissionPolicyBinding, namespace, name string) string {
	return bindingDiffersFrom(b, TermPolicyBinding(namespace, name))
}

// bindingDiffersFrom says how b differs from the binding w (a Lease's or
// a term group's) in what decides whether a stale create is refused (""
// if it does not).
func bindingDiffersFrom(b, w *admissionv1.ValidatingAdmissionPolicyBinding) string {
	want, got := w.Spec, b.Spec
	r, wr := got.ParamRef, want.ParamRef
	switch {
	case got.PolicyName != TermPolicyName:
		return "it does not bind " + TermPolicyName
	case r == nil || r.Namespace != wr.Namespace || r.Name != wr.Name || (r.Selector == nil) != (wr.Selector == nil) ||
		wr.Selector != nil && (emptySelector(r.Selector) || !equalSelector(r.Selector, wr.Selector)):
		if wr.Selector != nil {
			return "its paramRef does not select the term group's Leases"
		}
		return "its paramRef is not the Lease"
	case r.ParameterNotFoundAction == nil || *r.ParameterNotFoundAction != admissionv1.DenyAction:
		return "its parameterNotFoundAction is not Deny"
	case !slices.Contains(got.ValidationActions, admissionv1.Deny):
		return "its validationActions do not Deny"
	case got.MatchResources == nil:
		return "it has no matchResources"
	case len(got.MatchResources.ResourceRules) > 0 || len(got.MatchResources.ExcludeResourceRules) > 0:
		return "its matchResources narrow the resources"
	case !emptySelector(got.MatchResources.NamespaceSelector):
		return "its matchResources select namespaces"
	case !equalSelector(got.MatchResources.ObjectSelector, want.MatchResources.ObjectSelector):
		return "its objectSelector is not the Lease's term label"
	}
	return ""
}

// emptySelector reports whether s selects everything (nil or empty, as
// the API server defaults an absent one).
func emptySelector(s *metav1.LabelSelector) bool {
	return s == nil || len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0
}

// equalSelector compares two label selectors' requirements.
func equalSelector(a, b *metav1.LabelSelector) bool {
	if emptySelector(a) || emptySelector(b) {
		return emptySelector(a) && emptySelector(b)
	}
	if len(a.MatchLabels) != len(b.MatchLabels) || !slices.EqualFunc(a.MatchExpressions, b.MatchExpressions, equalRequirement) {
		return false
	}
	for k, v := range a.MatchLabels {
		if w, ok := b.MatchLabels[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func equalRequirement(a, b metav1.LabelSelectorRequirement) bool {
	return a.Key == b.Key && a.Operator == b.Operator && slices.Equal(a.Values, b.Values)
}

// equalRule compares resource rules, taking an absent scope as "*" (the
// API server's default).
func equalRule(a, b admissionv1.NamedRuleWithOperations) bool {
	scope := func(s *admissionv1.ScopeType) admissionv1.ScopeType {
		if s == nil {
			return admissionv1.AllScopes
		}
		return *s
	}
	return slices.Equal(a.ResourceNames, b.ResourceNames) && slices.Equal(a.Operations, b.Operations) &&
		slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.APIVersions, b.APIVersions) &&
		slices.Equal(a.Resources, b.Resources) && scope(a.Scope) == scope(b.Scope)
}
