package leader_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestAdv5StaleCreatesOfTrickyUsernamesAreRefused: where the attack of
// issue 24 looked for a username whose label value the policy computes
// otherwise than Go (so that the fence's own stale create passes for a
// copy by another user) and found none. For each username (':' and '@'
// at and around the cut of a long name, upper case, a service account's,
// one longer than 63 with the cut inside a run of separators, one with
// characters no label holds, one outside ASCII), a create sent through
// the fence of a config impersonating it, held past the term, is refused.
func TestAdv5StaleCreatesOfTrickyUsernamesAreRefused(t *testing.T) {
	users := []string{
		"system:serviceaccount:some-namespace:some-operator",
		"Admin@Example.COM",
		strings.Repeat("a", 30) + ":@" + strings.Repeat("b", 40) + "@:" + strings.Repeat("c", 30),
		strings.Repeat("x", 31) + ":" + strings.Repeat("y", 31) + "@" + strings.Repeat("z", 31),
		"oidc#https://issuer.example/sub",
		"ünïcode-user",
		strings.Repeat("q", 63),
		strings.Repeat("q", 64),
	}
	ns := controlplanetest.Namespace(t, cp.Config())
	installTermPolicy(t, ns, "lease")
	e := newElector(t, ns, "a")
	var stalls []*stall
	var term string
	inTerm(t, e, func(ctx context.Context) {
		term = currentTerm(t, ns)
		waitAdmitted(t, ctx, ns, term)
		for i, u := range users {
			base := rest.CopyConfig(cp.Config())
			base.Impersonate = rest.ImpersonationConfig{UserName: u, Groups: []string{"system:masters", "system:authenticated"}}
			cfg, s := stalled(base)
			stalls = append(stalls, s)
			_, err := kubernetes.NewForConfigOrDie(e.Fence(cfg)).CoreV1().ConfigMaps(ns).Create(ctx,
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "user-" + string(rune('a'+i))}}, metav1.CreateOptions{})
			if err == nil || !strings.Contains(err.Error(), "adv5: connection stalled") {
				t.Fatalf("create as %q: %v, want held", u, err)
			}
		}
	})
	eventually(t, "the ended term refused", func() bool { return dryRunStamped(t.Context(), ns, term) != nil })
	for i, s := range stalls {
		codes, answers := s.deliver(t)
		if len(codes) != 1 || codes[0] != 403 || !strings.Contains(answers[0], leader.TermPolicyName) {
			t.Errorf("the stale create sent as %q: %v %.200v, want refused by the term policy", users[i], codes, answers)
		}
	}
}
