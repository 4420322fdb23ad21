package leader_test

import (
	"context"
	"testing"

	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv4AccessReviewsThroughTheFenceAreNotRefused: the fence stamps
// every POST to a collection with the term label and annotation, also the
// "creates" that are questions: SubjectAccessReview and its kin. The API
// server requires their metadata to be empty (a LocalSubjectAccessReview's
// to hold only its namespace), and refuses them as Invalid ("metadata:
// must be empty"), in every term, the current one included: an operator
// that checks a user's access (an admission or HTTP endpoint, a
// delegating authorizer) on the fenced config, as replicas.md says to
// build the term's clients, can never ask. A liveness defect of the stamp,
// with no term policy involved: a create of the current term refused.
func TestAdv4AccessReviewsThroughTheFenceAreNotRefused(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	attrs := &authzv1.ResourceAttributes{Namespace: ns, Verb: "get", Resource: "pods"}
	inTerm(t, e, func(ctx context.Context) {
		waitAdmitted(t, ctx, ns, currentTerm(t, ns))
		for _, wire := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
			cfg := e.Fence(cp.Config())
			cfg.ContentType = wire
			authz := kubernetes.NewForConfigOrDie(cfg).AuthorizationV1()
			reviews := map[string]func() error{
				"SubjectAccessReview": func() error {
					_, err := authz.SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
						User: "someone", ResourceAttributes: attrs}}, metav1.CreateOptions{})
					return err
				},
				"LocalSubjectAccessReview": func() error {
					_, err := authz.LocalSubjectAccessReviews(ns).Create(ctx, &authzv1.LocalSubjectAccessReview{
						ObjectMeta: metav1.ObjectMeta{Namespace: ns},
						Spec:       authzv1.SubjectAccessReviewSpec{User: "someone", ResourceAttributes: attrs}}, metav1.CreateOptions{})
					return err
				},
				"SelfSubjectAccessReview": func() error {
					_, err := authz.SelfSubjectAccessReviews().Create(ctx, &authzv1.SelfSubjectAccessReview{Spec: authzv1.SelfSubjectAccessReviewSpec{
						ResourceAttributes: attrs}}, metav1.CreateOptions{})
					return err
				},
			}
			for kind, ask := range reviews {
				if err := ask(); err != nil {
					t.Errorf("%s (%s) through the fence, in the current term: %v", kind, wire, err)
				}
			}
		}
	})
}
