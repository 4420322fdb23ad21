package shard

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// adv11User is the user whose writes the ring guard judges: the test's
// own config impersonating someone other than the operator (whom the
// guard takes to be the user of cp.Config(), asked of the API server),
// with every RBAC right, so that only the guard can refuse.
const adv11User = "adv11-kubectl-user"

// adv11UserClient returns a clientset sending as adv11User.
func adv11UserClient(cfg *rest.Config) kubernetes.Interface {
	cfg = rest.CopyConfig(cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: adv11User, Groups: []string{"system:masters", "system:authenticated"}}
	return controlplanetest.Clientset(cfg)
}

// adv11Guard installs the ring guard of ring over the namespace the ring
// lives in, as a sharder with SharderOptions.RingPolicy would (its users
// the default: the operator's, cp.Config()'s), and removes it at the end
// of the test.
func adv11Guard(t *testing.T, ring Ring) {
	t.Helper()
	kube := controlplanetest.Clientset(cp.Config())
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kube.Discovery()))
	if err := InstallRingPolicy(t.Context(), kube, mapper, ring, RingPolicyOptions{Namespace: ring.Namespace}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, c := context.Background(), kube.AdmissionregistrationV1()
		_ = c.ValidatingAdmissionPolicyBindings().Delete(ctx, RingPolicyName(ring), metav1.DeleteOptions{})
		_ = c.ValidatingAdmissionPolicies().Delete(ctx, RingPolicyName(ring), metav1.DeleteOptions{})
	})
}

// adv11RefusedByGuard reports whether err is the ring guard of ring
// refusing a write, with its message naming the labels and saying to
// keep them.
func adv11RefusedByGuard(err error, ring Ring) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
		return false
	}
	msg := status.Status().Message
	return strings.Contains(msg, RingPolicyName(ring)) && strings.Contains(msg, AssignmentLabel(ring.Name)) &&
		strings.Contains(msg, TrailAnnotation(ring.Name)) && strings.Contains(msg, "keep them as they are")
}

// adv11UserUpdateRefused sends cm as adv11User's update, and fails the
// test unless the ring guard refuses it. A guard installed moments ago is
// enforced once the API server's informers have it: the update is sent
// as a dry run until the guard refuses it (so nothing is written while it
// is not enforced yet), then for real.
func adv11UserUpdateRefused(t *testing.T, ring Ring, cm *corev1.ConfigMap) {
	t.Helper()
	user := adv11UserClient(cp.Config()).CoreV1().ConfigMaps(cm.Namespace)
	var last error
	controlplanetest.Eventually(t, time.Minute, "the ring guard refuses the user's dry-run update", func() bool {
		_, last = user.Update(t.Context(), cm.DeepCopy(), metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return adv11RefusedByGuard(last, ring)
	})
	_, err := user.Update(t.Context(), cm.DeepCopy(), metav1.UpdateOptions{})
	if !adv11RefusedByGuard(err, ring) {
		t.Fatalf("the user's update of ConfigMap %s: %v, want refused by the ring guard with its message", cm.Name, err)
	}
	t.Logf("refused as wanted: %v", err)
}

// adv11RingKeys returns the ring's labels and trail of cm, to compare.
func adv11RingKeys(cm *corev1.ConfigMap, ring string) [3]string {
	return [3]string{cm.Labels[AssignmentLabel(ring)], cm.Labels[DrainLabel(ring)], cm.Annotations[TrailAnnotation(ring)]}
}

// adv11GuardedAnswer is the end of adv10UsersLabelsGuarded: the user's
// write of cm is refused by the ring guard, X's ring labels and trail
// are still before, B's handler for X has not begun while A's runs; then
// A's handler returns and, with drain, B handles X only after it ended
// (the drain, acknowledged by A's gate, is the operator's write and
// passes the guard).
func adv11GuardedAnswer(t *testing.T, ring Ring, cm *corev1.ConfigMap, before [3]string, spans *advSpans, releaseA func(), drain bool) {
	t.Helper()
	x := cm.Name
	adv11UserUpdateRefused(t, ring, cm)
	kube := controlplanetest.Clientset(cp.Config())
	now, err := kube.CoreV1().ConfigMaps(cm.Namespace).Get(t.Context(), x, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := adv11RingKeys(now, ring.Name); got != before {
		t.Fatalf("ConfigMap %s's ring labels and trail are %q after the refused write, want %q", x, got, before)
	}
	if bRun, bRan := spans.find("b", x, false); bRan {
		aRun, _ := spans.find("a", x, false)
		t.Fatalf("member B's handler for ConfigMap %s began (run %+v) while member A's, begun before, still ran (run %+v)", x, bRun, aRun)
	}
	releaseA()
	if !drain {
		return
	}
	controlplanetest.Eventually(t, time.Minute, "B handles X once A acknowledged", func() bool {
		_, bRan := spans.find("b", x, false)
		return bRan
	})
	aRun, _ := spans.find("a", x, false)
	if bRun, _ := spans.find("b", x, false); aRun.end == 0 || bRun.start < aRun.end {
		t.Fatalf("member B's handler for ConfigMap %s began (run %+v) before member A's ended (run %+v)", x, bRun, aRun)
	}
}
