package shard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// The ring guard: the ring's assignment and drain labels and its trail
// annotation say which member runs an object, and the protocol holds only
// while the sharder and the members' gates are the only ones who write
// them. A user's write of them (a saved manifest applied again, a replace
// that drops them, a release copied back from an old manifest) can make
// two members run one object at once (the adv11 tests). So the API server
// refuses a create or update of an object of the ring's kinds that adds,
// removes or changes any of them, unless it is sent by one of the
// operator's users: a ValidatingAdmissionPolicy and its binding per ring
// (RingPolicy), installed by InstallRingPolicy or by the sharder
// (SharderOptions.RingPolicy). Deletion is not checked.

// DefaultRingPolicyFieldManager is the field manager InstallRingPolicy
// applies the ring guard with unless RingPolicyOptions names another.
const DefaultRingPolicyFieldManager = "lariat-shard-ring-guard"

// RingPolicyOptions tunes InstallRingPolicy and the sharder's install of
// the ring guard (SharderOptions.RingPolicy). The zero value is usable.
type RingPolicyOptions struct {
	// Users are the usernames allowed to write the ring's labels and
	// trail: those the sharder and the members authenticate as (for a
	// service account, "system:serviceaccount:NAMESPACE:NAME"). The
	// default is the one user the installing config authenticates as,
	// asked of the API server (a SelfSubjectReview): right when the
	// sharder and the members run as one identity, which is the usual
	// Deployment. Members running as another user must be named here, or
	// their gates' claims and releases are refused.
	Users []string
	// Namespace, when set, limits the guard to the objects of that
	// namespace (the sharder's SharderOptions.Namespace by default);
	// cluster-scoped kinds are always guarded.
	Namespace string
	// FieldManager is the field manager of the server-side apply
	// (DefaultRingPolicyFieldManager).
	FieldManager string
	// EnforcementWait bounds how long InstallRingPolicy waits for the API
	// server to enforce the guard it applied (see ringpolicy_probe.go):
	// DefaultRingGuardEnforcementWait when zero.
	EnforcementWait time.Duration
}

// RingPolicyName returns the name of the ValidatingAdmissionPolicy, and of
// its binding, that guard ring's labels and trail.
func RingPolicyName(ring Ring) string {
	return "ring-guard." + ring.Namespace + "." + ring.Name + ".shard.lariat.dev"
}

// RingPolicyMessage returns what the API server answers a write the ring
// guard refuses (after its own "ValidatingAdmissionPolicy ... denied
// request: " prefix).
func RingPolicyMessage(ring string) string {
	return fmt.Sprintf("the label %s, the label %s and the annotation %s are written only by the sharder and the members of ring %s "+
		"(lariat.dev ring guard): keep them as they are in the object you write (a manifest that creates one must not carry them)",
		AssignmentLabel(ring), DrainLabel(ring), TrailAnnotation(ring), ring)
}

// ringValue returns the CEL expression of the ring key key in the map
// field (labels or annotations) of obj (object or oldObject): a list
// holding its value, empty when the key is absent, so that an absent key
// and an empty value differ.
func ringValue(obj, field, key string) string {
	m := obj + ".metadata." + field
	return fmt.Sprintf("%s != null && has(%s) && '%s' in %s ? [%s['%s']] : []", obj, m, key, m, m, key)
}

// RingPolicy returns the ring guard of ring over the resources given (the
// ring's kinds, mapped: InstallRingPolicy maps them), letting users (see
// RingPolicyOptions.Users; at least one) write the ring's labels and
// trail, and namespace, when not "", limiting it to that namespace. Every
// version of each resource is matched, and its status subresource, so
// that no other way of writing the object escapes it. Its failure policy
// is Fail: a write the API server cannot judge is refused.
func RingPolicy(ring Ring, resources []schema.GroupVersionResource, users []string, namespace string) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding, error) {
	if err := ring.Validate(); err != nil {
		return nil, nil, err
	}
	if len(resources) == 0 {
		return nil, nil, fmt.Errorf("shard: ring %s: the ring guard needs the resources of the ring's kinds", ring.Name)
	}
	if len(users) == 0 {
		return nil, nil, fmt.Errorf("shard: ring %s: the ring guard needs the operator's usernames", ring.Name)
	}
	quoted := make([]string, 0, len(users))
	for _, u := range users {
		if u == "" || !utf8.ValidString(u) {
			return nil, nil, fmt.Errorf("shard: ring %s: username %q cannot be allowed by the ring guard", ring.Name, u)
		}
		quoted = append(quoted, strconv.Quote(u)) // a CEL string literal too (valid UTF-8)
	}
	var rules []admissionv1.NamedRuleWithOperations
	for _, r := range resources {
		rules = append(rules, admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
			Rule:       admissionv1.Rule{APIGroups: []string{r.Group}, APIVersions: []string{"*"}, Resources: []string{r.Resource, r.Resource + "/status"}},
		}})
	}
	rules, conds := ringProbeMatch(ring, resources, rules, namespace)
	match := &admissionv1.MatchResources{ResourceRules: rules}
	keys := []struct{ name, field, key string }{
		{"assignment", "labels", AssignmentLabel(ring.Name)},
		{"drain", "labels", DrainLabel(ring.Name)},
		{"trail", "annotations", TrailAnnotation(ring.Name)},
	}
	var vars []admissionv1.Variable
	check := "request.userInfo.username in [" + strings.Join(quoted, ", ") + "]"
	for _, k := range keys {
		vars = append(vars,
			admissionv1.Variable{Name: k.name, Expression: ringValue("object", k.field, k.key)},
			admissionv1.Variable{Name: "old_" + k.name, Expression: ringValue("oldObject", k.field, k.key)})
	}
	var same []string
	for _, k := range keys {
		same = append(same, "variables."+k.name+" == variables.old_"+k.name)
	}
	check += " || (" + strings.Join(same, " && ") + ")"
	fail, forbidden := admissionv1.Fail, metav1.StatusReasonForbidden
	name := RingPolicyName(ring)
	p := &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    &fail,
			MatchConstraints: match,
			MatchConditions:  conds,
			Variables:        vars,
			Validations: []admissionv1.Validation{
				{Expression: "!(" + ringProbed(ring) + ")", Message: ringProbeMessage(ring), Reason: &forbidden},
				{Expression: check, Message: RingPolicyMessage(ring.Name), Reason: &forbidden},
			},
		},
	}
	b := &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
	return p, b, nil
}

// ringResources maps the ring's kinds to their resources with mapper.
func ringResources(ring Ring, mapper meta.RESTMapper) ([]schema.GroupVersionResource, error) {
	var out []schema.GroupVersionResource
	for _, k := range ring.Kinds {
		m, err := mapper.RESTMapping(k.GVK.GroupKind(), k.GVK.Version)
		if err != nil {
			return nil, fmt.Errorf("shard: ring %s: map kind %v for the ring guard: %w", ring.Name, k.GVK, err)
		}
		out = append(out, m.Resource)
	}
	return out, nil
}

// InstallRingPolicy maps ring's kinds with mapper and applies the ring
// guard (RingPolicy) with server-side apply, so that the API server
// refuses any other user's write of the ring's labels and trail. It
// needs patch (and create) on validatingadmissionpolicies and
// validatingadmissionpolicybindings, which are cluster-scoped: an error
// that says so is returned when they are missing, and one that names the
// API when the API server does not serve it (Kubernetes before 1.30).
// It returns once the API server enforces the guard (its informers have
// it, usually within a second): a dry-run create of a Lease it must refuse
// is refused (see ringpolicy_probe.go; it needs create on leases in the
// guarded namespace, or the ring's). An API server that still admits it
// after RingPolicyOptions.EnforcementWait (its ValidatingAdmissionPolicy
// admission plugin is not enabled) is an error wrapping
// ErrRingGuardNotEnforced: the guard refuses nothing there.
func InstallRingPolicy(ctx context.Context, kube kubernetes.Interface, mapper meta.RESTMapper, ring Ring, o RingPolicyOptions) error {
	resources, err := ringResources(ring, mapper)
	if err != nil {
		return err
	}
	return installRingPolicy(ctx, kube, ring, resources, o)
}

// installRingPolicy is InstallRingPolicy of the resources given.
func installRingPolicy(ctx context.Context, kube kubernetes.Interface, ring Ring, resources []schema.GroupVersionResource, o RingPolicyOptions) error {
	users := o.Users
	if len(users) == 0 {
		u, err := whoAmI(ctx, kube)
		if err != nil {
			return fmt.Errorf("shard: ring %s: the ring guard's default user: %w", ring.Name, err)
		}
		users = []string{u}
	}
	p, b, err := RingPolicy(ring, resources, slices.Compact(slices.Sorted(slices.Values(users))), o.Namespace)
	if err != nil {
		return err
	}
	fm := o.FieldManager
	if fm == "" {
		fm = DefaultRingPolicyFieldManager
	}
	c := kube.AdmissionregistrationV1()
	if err := writeWhole(ctx, c.ValidatingAdmissionPolicies(), p.Name, p, p.Spec, fm); err != nil {
		return ringPolicyError(ring, "ValidatingAdmissionPolicy", p.Name, err)
	}
	if err := writeWhole(ctx, c.ValidatingAdmissionPolicyBindings(), b.Name, b, b.Spec, fm); err != nil {
		return ringPolicyError(ring, "ValidatingAdmissionPolicyBinding", b.Name, err)
	}
	return probeRingPolicy(ctx, kube, ring, probeNamespace(ring, o.Namespace), o.EnforcementWait)
}

// patcher is the Patch of a ValidatingAdmissionPolicy or binding client.
type patcher[T any] interface {
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
}

// writeWhole applies obj (server-side apply, so that it is created if
// missing), then replaces its whole spec with spec (a JSON patch: patch
// is the verb either way). Server-side apply alone keeps what another
// field manager added (a matchCondition "false" left by kubectl edit, a
// binding's narrowed matchResources), and the guard would admit every
// write while its install reported it in place.
func writeWhole[T any](ctx context.Context, c patcher[T], name string, obj, spec any, fm string) error {
	force := true
	body, err := json.Marshal(obj)
	if err == nil {
		_, err = c.Patch(ctx, name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: fm, Force: &force})
	}
	if err != nil {
		return err
	}
	if body, err = json.Marshal([]any{map[string]any{"op": "replace", "path": "/spec", "value": spec}}); err != nil {
		return err
	}
	_, err = c.Patch(ctx, name, types.JSONPatchType, body, metav1.PatchOptions{FieldManager: fm})
	return err
}

// ErrRingPolicyUnsupported is wrapped by InstallRingPolicy's error when the
// API server does not serve admissionregistration.k8s.io/v1
// ValidatingAdmissionPolicies: the ring's labels cannot be guarded there.
var ErrRingPolicyUnsupported = errors.New("the API server does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (Kubernetes 1.30 or later does)")

// ringPolicyError says why the ring guard's object kind/name could not be
// applied, in words an operator's installer can act on.
func ringPolicyError(ring Ring, kind, name string, err error) error {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("shard: ring %s: install the ring guard %s %s: the operator needs patch and create on validatingadmissionpolicies and validatingadmissionpolicybindings (admissionregistration.k8s.io, cluster-scoped), or install it with RingPolicy from an installer that has them: %w",
			ring.Name, kind, name, err)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("shard: ring %s: install the ring guard %s %s: %w: %w", ring.Name, kind, name, ErrRingPolicyUnsupported, err)
	}
	return fmt.Errorf("shard: ring %s: install the ring guard %s %s: %w", ring.Name, kind, name, err)
}

// whoAmI asks the API server which user kube's config authenticates as.
func whoAmI(ctx context.Context, kube kubernetes.Interface) (string, error) {
	r, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("ask the API server who the config is (SelfSubjectReview): %w", err)
	}
	if r.Status.UserInfo.Username == "" {
		return "", errors.New("the API server did not say who the config is (SelfSubjectReview)")
	}
	return r.Status.UserInfo.Username, nil
}
