package leader

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	admissionv1client "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
)

// TermPolicyName is the name of the ValidatingAdmissionPolicy that checks
// the term stamp of creates (one per cluster, shared by every Lease).
const TermPolicyName = "term-fence.lariat.dev"

// The policy's expressions (variables, then the check and its message).
// id, user: the create's TermIDLabel and TermUserLabel ("" if none);
// sender: TermUserLabelValue of the user sending it; holder, current: the
// Lease's holder and TermIDLabel ("" if none). A create sent by another
// user than the one its stamp names is a copy of a stamped object (a
// user's, a backup tool's), not the fence's, and is admitted; a stamp
// naming no user is judged whoever sends it. A judged create is admitted
// only if the Lease has a holder (a released Lease has none) and is in
// the term the create carries.
//
// A Lease of a term group (group: its TermGroupLabel) is one of many
// parameters of the group's binding (TermGroupBinding), and the policy is
// evaluated once per parameter: each of them judges only the creates of
// its own term (id == current, a group's Lease holding one term), and
// admits the others, which are the other Leases' to judge (the
// enforcement probe, termProbeID, excepted: every Lease refuses it). A
// group's create whose Lease is gone is judged by none of them: that is
// why a group's Leases are deleted only long after their term
// (docs/replicas.md). ended: the term a Lease was ended in by someone
// other than its holder (TermEndedLabel), whose creates are refused.
//
// A create that carries no TermIDLabel but the stamp of earlier versions
// (TermAnnotation, legacy, and TermUserAnnotation, legacyUser) is judged
// by the rules it was written under: admitted if another user sends it
// or it names another Lease (lease is the prefix of this Lease's stamps),
// else only if it names the Lease's holder and current term. So creates
// of a replica of an earlier version stay fenced during a rolling upgrade.
const (
	policyID         = `has(object.metadata.labels) && '` + TermIDLabel + `' in object.metadata.labels ? object.metadata.labels['` + TermIDLabel + `'] : ''`
	policyUser       = `has(object.metadata.labels) && '` + TermUserLabel + `' in object.metadata.labels ? object.metadata.labels['` + TermUserLabel + `'] : ''`
	policyName       = `request.userInfo.username.replace(':', '.').replace('@', '_')`
	policySender     = `size(variables.name) <= 63 ? variables.name : variables.name.substring(0, 31) + '-' + variables.name.substring(size(variables.name) - 31, size(variables.name))`
	policyHolder     = `has(params.spec.holderIdentity) ? params.spec.holderIdentity : ''`
	policyCurrent    = `has(params.metadata.labels) && '` + TermIDLabel + `' in params.metadata.labels ? params.metadata.labels['` + TermIDLabel + `'] : ''`
	policyLegacy     = `has(object.metadata.annotations) && '` + TermAnnotation + `' in object.metadata.annotations ? object.metadata.annotations['` + TermAnnotation + `'] : ''`
	policyLegacyUser = `has(object.metadata.annotations) && '` + TermUserAnnotation + `' in object.metadata.annotations ? object.metadata.annotations['` + TermUserAnnotation + `'] : ''`
	policyLease      = `params.metadata.namespace + '/' + params.metadata.name + '/'`
	policyGroup      = `has(params.metadata.labels) && '` + TermGroupLabel + `' in params.metadata.labels ? params.metadata.labels['` + TermGroupLabel + `'] : ''`
	policyEnded      = `has(params.metadata.labels) && '` + TermEndedLabel + `' in params.metadata.labels ? params.metadata.labels['` + TermEndedLabel + `'] : ''`
	policyCheck      = `variables.id != '' ? ` +
		`(variables.group != '' && variables.id != variables.current && variables.id != '` + termProbeID + `') || ` +
		`(variables.user != '' && variables.user != variables.sender) || ` +
		`(variables.holder != '' && variables.id == variables.current && variables.ended != variables.id) : ` +
		`(variables.legacyUser != '' && variables.legacyUser != request.userInfo.username) || !variables.legacy.startsWith(variables.lease) || ` +
		`(variables.holder != '' && variables.legacy == variables.lease + variables.holder + '/' + variables.current)`
	policyMessage = `'create sent in term ' + (variables.id != '' ? variables.id : variables.legacy) + ' refused: the term is over, the Lease ' + ` +
		`params.metadata.namespace + '/' + params.metadata.name + ' is in term ' + variables.current + ` +
		`(variables.ended != '' && variables.ended == variables.current ? ', ended,' : '') + ` +
		`(variables.holder != '' ? ' of ' + variables.holder : ', released') + ' (lariat.dev term fence)'`
)

// TermPolicy returns the ValidatingAdmissionPolicy that refuses a create
// stamped with a term of a Lease (TermIDLabel) unless that term is the
// Lease's current one and the Lease has a holder. It matches only creates
// carrying TermLeaseLabel, of every resource: objects created without the
// stamp (users' own, or through an unfenced config) are never checked,
// and it admits a stamped create sent by another user than the stamp's
// TermUserLabel names (the fence's own): a copy or restore of an object
// the fence created, under another identity, is never refused. A create
// stamped by an earlier version (TermAnnotation) is judged as that
// version's policy judged it. Its failure policy is Fail: a binding whose
// Lease is missing, or an API server that cannot read Leases yet, refuses
// the stamped create rather than let it through.
func TermPolicy() *admissionv1.ValidatingAdmissionPolicy {
	fail, forbidden := admissionv1.Fail, metav1.StatusReasonForbidden
	return &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: TermPolicyName},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			ParamKind:     &admissionv1.ParamKind{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
			MatchConstraints: &admissionv1.MatchResources{
				ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule:       admissionv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}},
				}}},
				ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: TermLeaseLabel, Operator: metav1.LabelSelectorOpExists},
				}},
			},
			Variables: []admissionv1.Variable{
				{Name: "id", Expression: policyID},
				{Name: "user", Expression: policyUser},
				{Name: "name", Expression: policyName},
				{Name: "sender", Expression: policySender},
				{Name: "holder", Expression: policyHolder},
				{Name: "current", Expression: policyCurrent},
				{Name: "legacy", Expression: policyLegacy},
				{Name: "legacyUser", Expression: policyLegacyUser},
				{Name: "lease", Expression: policyLease},
				{Name: "group", Expression: policyGroup},
				{Name: "ended", Expression: policyEnded},
			},
			Validations: []admissionv1.Validation{{
				Expression: policyCheck, MessageExpression: policyMessage, Reason: &forbidden,
			}},
		},
	}
}

// TermPolicyBindingName is the name of the binding of TermPolicy to the
// Lease namespace/name.
func TermPolicyBindingName(namespace, name string) string {
	n := namespace + "." + name + "." + TermPolicyName
	if len(n) <= 253 {
		return n
	}
	sum := sha256.Sum256([]byte(namespace + "/" + name))
	return "h-" + hex.EncodeToString(sum[:12]) + "." + TermPolicyName
}

// TermPolicyBinding returns the binding of TermPolicy to the Lease
// namespace/name: it selects the creates stamped with that Lease's label
// value, takes the Lease as the parameter, and denies when the Lease does
// not exist (parameterNotFoundAction Deny, under the policy's Fail): a
// Lease deleted, as a member Lease is, ends every term stamped with it.
func TermPolicyBinding(namespace, name string) *admissionv1.ValidatingAdmissionPolicyBinding {
	deny := admissionv1.DenyAction
	return &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: TermPolicyBindingName(namespace, name)},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: TermPolicyName,
			ParamRef:   &admissionv1.ParamRef{Namespace: namespace, Name: name, ParameterNotFoundAction: &deny},
			MatchResources: &admissionv1.MatchResources{ObjectSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{TermLeaseLabel: TermLeaseLabelValue(namespace, name)},
			}},
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
}

// InstallTermPolicy creates TermPolicy and its binding to the Lease
// namespace/name, or updates them to what this version of Lariat writes.
// It needs create, get and update on validatingadmissionpolicies and
// validatingadmissionpolicybindings (cluster-scoped): run it from an
// installer with those rights, or give them to the operator. The API
// server enforces a new policy once its own informers have seen it
// (usually within a second); CheckTermPolicy says whether it exists.
func InstallTermPolicy(ctx context.Context, c admissionv1client.AdmissionregistrationV1Interface, namespace, name string) error {
	return installTermPolicy(ctx, c, TermPolicyBinding(namespace, name))
}

// installTermPolicy creates or updates TermPolicy and the binding b.
func installTermPolicy(ctx context.Context, c admissionv1client.AdmissionregistrationV1Interface, b *admissionv1.ValidatingAdmissionPolicyBinding) error {
	p := TermPolicy()
	old, err := c.ValidatingAdmissionPolicies().Get(ctx, p.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = c.ValidatingAdmissionPolicies().Create(ctx, p, metav1.CreateOptions{})
	case err == nil:
		p.ResourceVersion = old.ResourceVersion
		_, err = c.ValidatingAdmissionPolicies().Update(ctx, p, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("leader: install ValidatingAdmissionPolicy %s: %w", p.Name, err)
	}
	oldB, err := c.ValidatingAdmissionPolicyBindings().Get(ctx, b.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = c.ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{})
	case err == nil:
		b.ResourceVersion = oldB.ResourceVersion
		_, err = c.ValidatingAdmissionPolicyBindings().Update(ctx, b, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("leader: install ValidatingAdmissionPolicyBinding %s: %w", b.Name, err)
	}
	return nil
}

// warnIfUnfenced logs, by name, what of the Lease's term fence is missing,
// when WithTermPolicyCheck gave a client to look with. The check may take
// a while (CheckTermPolicy waits for an API server to enforce a policy
// installed moments ago), so it runs beside the caller's campaign: the
// returned func ends it and returns once it did.
func (e *Elector) warnIfUnfenced(ctx context.Context) (wait func()) {
	if e.o.admission == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		log := e.o.log.WithField("lease", e.namespace+"/"+e.name)
		err := CheckTermPolicy(ctx, e.o.admission, e.namespace, e.name)
		var missing *TermPolicyError
		switch {
		case errors.As(err, &missing) && (ctx.Err() == nil || missing.Missing[0] != notEnforced):
			// (Run ending cuts the wait for enforcement short: that
			// is no finding.)
			log.WithField("missing", strings.Join(missing.Missing, ", ")).Warn("leader: creates are not fenced: " + err.Error())
		case err != nil && ctx.Err() == nil:
			log.WithError(err).Warn("leader: could not check the term fence of creates")
		}
	}()
	return func() { cancel(); <-done }
}

// IsTermRefused reports whether err is the API server refusing a create
// through TermPolicy: the term it was stamped with is over, or its Lease
// is gone (the status is Forbidden for the first, Invalid for the
// second, as the API server reports a binding whose parameter is
// missing). Retrying it in the same term cannot succeed.
func IsTermRefused(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	return strings.Contains(status.Status().Message, "ValidatingAdmissionPolicy '"+TermPolicyName+"'")
}
