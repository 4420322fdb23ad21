package leader_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// tenantKey is the context key of the tenant a create is sent for.
type tenantKey struct{}

// tenantImpersonation sets Impersonate-User from the request's context:
// the shape of an operator that acts for a tenant per call, its wrapper
// in the config it hands to Fence (so inside the fence's wrapper).
type tenantImpersonation struct{ next http.RoundTripper }

func (ti tenantImpersonation) RoundTrip(req *http.Request) (*http.Response, error) {
	if tenant, _ := req.Context().Value(tenantKey{}).(string); tenant != "" {
		req = req.Clone(req.Context())
		req.Header.Set("Impersonate-User", tenant)
		req.Header.Set("Impersonate-Group", "system:masters")
	}
	return ti.next.RoundTrip(req)
}

// TestAdv6SenderSetInsideTheFenceIsStampedWithItsOwnUser: the fence tells
// senders apart by the Authorization and Impersonate-* headers it sees
// (termuser.go identityKey), but a wrapper of the config given to Fence
// runs inside the fence and may set them after it looked (per request,
// from the context: an operator acting for a tenant). Its own review
// (SelfSubjectReview, sent through the same inner wrapper with the
// create's context) learns the first tenant right, and the cache then
// answers that tenant for every later create of the term, whoever the
// inner wrapper sends it as. The second tenant's create is stamped with
// the first tenant's name; the policy takes it for a copy by another user
// and admits it unjudged: held in the network past the term, it lands.
func TestAdv6SenderSetInsideTheFenceIsStampedWithItsOwnUser(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	cfg, s := stalled(cp.Config()) // ConfigMap creates are held, Secrets' go
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return tenantImpersonation{next: rt} })
	k := kubernetes.NewForConfigOrDie(e.Fence(cfg))
	var term string
	inTerm(t, e, func(ctx context.Context) {
		term = currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, term)
		alice := context.WithValue(ctx, tenantKey{}, "tenant-alice")
		if _, err := k.CoreV1().Secrets(ns).Create(alice,
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "alice-secret"}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("alice's create: %v", err)
		}
		bob := context.WithValue(ctx, tenantKey{}, "tenant-bob")
		_, err := k.CoreV1().ConfigMaps(ns).Create(bob,
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bob-child"}}, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), "adv5: connection stalled") {
			t.Fatalf("bob's create: %v, want held by the stalled connection", err)
		}
	})
	eventually(t, "the ended term refused", func() bool { return dryRunStamped(t.Context(), ns, term) != nil })
	codes, answers := s.deliver(t)
	if len(codes) != 1 || codes[0] != http.StatusForbidden || !strings.Contains(answers[0], leader.TermPolicyName) {
		t.Errorf("bob's create, sent in the term and delivered after it: %v %.300q; want refused by the term policy "+
			"(it was sent as tenant-bob: its stamp's user should be tenant-bob)", codes, answers)
	}
}
