package leader

import (
	"slices"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTermPolicyCheckNamesWhatDoesNotRefuse: every change to the policy
// or binding that lets a stale create through is named; what
// InstallTermPolicy writes, and the API server's defaults, are not.
func TestTermPolicyCheckNamesWhatDoesNotRefuse(t *testing.T) {
	ignore := admissionv1.Ignore
	policies := map[string]func(*admissionv1.ValidatingAdmissionPolicySpec){
		"failurePolicy Ignore": func(s *admissionv1.ValidatingAdmissionPolicySpec) { s.FailurePolicy = &ignore },
		"another check":        func(s *admissionv1.ValidatingAdmissionPolicySpec) { s.Validations[0].Expression = "true" },
		"a matchCondition": func(s *admissionv1.ValidatingAdmissionPolicySpec) {
			s.MatchConditions = []admissionv1.MatchCondition{{Name: "never", Expression: "false"}}
		},
		"an excluded resource": func(s *admissionv1.ValidatingAdmissionPolicySpec) {
			s.MatchConstraints.ExcludeResourceRules = s.MatchConstraints.ResourceRules
		},
		"a namespace selector": func(s *admissionv1.ValidatingAdmissionPolicySpec) {
			s.MatchConstraints.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}}
		},
		"no user check (the shape before lariat.dev/term-user)": func(s *admissionv1.ValidatingAdmissionPolicySpec) {
			s.Validations[0].Expression = `!variables.stamp.startsWith(variables.lease) || variables.stamp == variables.current`
			s.Variables = slices.DeleteFunc(s.Variables, func(v admissionv1.Variable) bool { return v.Name == "user" })
		},
		"the annotation stamp's check (the shape before the labels)": func(s *admissionv1.ValidatingAdmissionPolicySpec) {
			s.Validations[0].Expression = `(variables.user != '' && variables.user != request.userInfo.username) || ` +
				`!variables.stamp.startsWith(variables.lease) || variables.stamp == variables.current`
			s.Variables = []admissionv1.Variable{
				{Name: "stamp", Expression: `has(object.metadata.annotations) && 'lariat.dev/term' in object.metadata.annotations ? object.metadata.annotations['lariat.dev/term'] : ''`},
				{Name: "user", Expression: `has(object.metadata.annotations) && 'lariat.dev/term-user' in object.metadata.annotations ? object.metadata.annotations['lariat.dev/term-user'] : ''`},
				{Name: "lease", Expression: `params.metadata.namespace + '/' + params.metadata.name + '/'`},
				{Name: "current", Expression: `variables.lease + (has(params.spec.holderIdentity) ? params.spec.holderIdentity : '') + '/' + ` +
					`(has(params.metadata.labels) && 'lariat.dev/term-id' in params.metadata.labels ? params.metadata.labels['lariat.dev/term-id'] : '')`},
			}
		},
		"no holder check": func(s *admissionv1.ValidatingAdmissionPolicySpec) {
			for i := range s.Variables {
				if s.Variables[i].Name == "holder" {
					s.Variables[i].Expression = `'someone'`
				}
			}
		},
		"a user that is nobody's": func(s *admissionv1.ValidatingAdmissionPolicySpec) {
			for i := range s.Variables {
				if s.Variables[i].Name == "user" {
					s.Variables[i].Expression = `'nobody'`
				}
			}
		},
		"updates only": func(s *admissionv1.ValidatingAdmissionPolicySpec) {
			s.MatchConstraints.ResourceRules[0].Operations = []admissionv1.OperationType{admissionv1.Update}
		},
	}
	if why := policyDiffers(TermPolicy()); why != "" {
		t.Errorf("the policy as written: %s", why)
	}
	for what, change := range policies {
		p := TermPolicy()
		change(&p.Spec)
		if policyDiffers(p) == "" {
			t.Errorf("a policy with %s passes the check", what)
		}
	}
	bindings := map[string]func(*admissionv1.ValidatingAdmissionPolicyBindingSpec){
		"Warn only": func(s *admissionv1.ValidatingAdmissionPolicyBindingSpec) {
			s.ValidationActions = []admissionv1.ValidationAction{admissionv1.Warn}
		},
		"Audit only": func(s *admissionv1.ValidatingAdmissionPolicyBindingSpec) {
			s.ValidationActions = []admissionv1.ValidationAction{admissionv1.Audit}
		},
		"a narrower object selector": func(s *admissionv1.ValidatingAdmissionPolicyBindingSpec) {
			s.MatchResources.ObjectSelector.MatchLabels["also"] = "this"
		},
		"a namespace selector": func(s *admissionv1.ValidatingAdmissionPolicyBindingSpec) {
			s.MatchResources.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}}
		},
		"resource rules": func(s *admissionv1.ValidatingAdmissionPolicyBindingSpec) {
			s.MatchResources.ResourceRules = []admissionv1.NamedRuleWithOperations{{ResourceNames: []string{"none"}}}
		},
		"a paramRef selector": func(s *admissionv1.ValidatingAdmissionPolicyBindingSpec) {
			s.ParamRef.Selector = &metav1.LabelSelector{}
		},
	}
	defaulted := TermPolicyBinding("ns", "lease")
	defaulted.Spec.MatchResources.NamespaceSelector = &metav1.LabelSelector{}
	defaulted.Spec.ValidationActions = append(defaulted.Spec.ValidationActions, admissionv1.Audit)
	if why := bindingDiffers(defaulted, "ns", "lease"); why != "" {
		t.Errorf("the binding as written and defaulted: %s", why)
	}
	for what, change := range bindings {
		b := TermPolicyBinding("ns", "lease")
		change(&b.Spec)
		if bindingDiffers(b, "ns", "lease") == "" {
			t.Errorf("a binding with %s passes the check", what)
		}
	}

	// A term group's binding selects its Leases, and denies when none.
	group := map[string]func(*admissionv1.ValidatingAdmissionPolicyBindingSpec){
		"a paramRef naming one Lease": func(s *admissionv1.ValidatingAdmissionPolicyBindingSpec) {
			s.ParamRef.Selector, s.ParamRef.Name = nil, "lease"
		},
		"a paramRef selecting every Lease": func(s *admissionv1.ValidatingAdmissionPolicyBindingSpec) {
			s.ParamRef.Selector = &metav1.LabelSelector{}
		},
		"a paramRef selecting other Leases": func(s *admissionv1.ValidatingAdmissionPolicyBindingSpec) {
			s.ParamRef.Selector.MatchLabels[TermGroupLabel] = "other"
		},
		"parameterNotFoundAction Allow": func(s *admissionv1.ValidatingAdmissionPolicyBindingSpec) {
			allow := admissionv1.AllowAction
			s.ParamRef.ParameterNotFoundAction = &allow
		},
		"another group's creates": func(s *admissionv1.ValidatingAdmissionPolicyBindingSpec) {
			s.MatchResources.ObjectSelector.MatchLabels[TermLeaseLabel] = "other"
		},
	}
	if why := bindingDiffersFrom(TermGroupBinding("ns", "ring-member-"), TermGroupBinding("ns", "ring-member-")); why != "" {
		t.Errorf("the group binding as written: %s", why)
	}
	for what, change := range group {
		b := TermGroupBinding("ns", "ring-member-")
		change(&b.Spec)
		if bindingDiffersFrom(b, TermGroupBinding("ns", "ring-member-")) == "" {
			t.Errorf("a group binding with %s passes the check", what)
		}
	}
}
