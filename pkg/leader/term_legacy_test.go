package leader_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// legacyStampedCM is a ConfigMap stamped as versions before the labels
// stamped a create: the annotation TermAnnotation = token (as currentTerm
// names a term), and TermUserAnnotation = user when user is not "".
func legacyStampedCM(name, token, user, ns string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels:      map[string]string{leader.TermLeaseLabel: leader.TermLeaseLabelValue(ns, "lease")},
		Annotations: map[string]string{leader.TermAnnotation: token}}}
	if user != "" {
		cm.Annotations[leader.TermUserAnnotation] = user
	}
	return cm
}

// TestEarlierVersionsStampIsJudgedAsItWas: a create stamped by a replica
// of an earlier version (the annotation, during a rolling upgrade) is
// judged by the rules it was written under: admitted in the Lease's
// current term, refused once that term is over (here: released, so the
// Lease has no holder), admitted when another user than the stamp names
// sends it.
func TestEarlierVersionsStampIsJudgedAsItWas(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	cms := controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns)
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	var term string
	inTerm(t, e, func(ctx context.Context) {
		term = currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, term)
		if _, err := cms.Create(ctx, legacyStampedCM("current", term, "", ns), dry); err != nil {
			t.Errorf("a create with the annotation stamp of the current term: %v", err)
		}
	})
	eventually(t, "the ended term's annotation stamp refused", func() bool {
		_, err := cms.Create(t.Context(), legacyStampedCM("ended", term, "", ns), dry)
		if err != nil && !leader.IsTermRefused(err) {
			t.Fatal(err)
		}
		return err != nil
	})
	if _, err := cms.Create(t.Context(), legacyStampedCM("copy", term, "someone-else", ns), dry); err != nil {
		t.Errorf("a copy of an object with the annotation stamp, sent by another user than it names: %v", err)
	}
}
