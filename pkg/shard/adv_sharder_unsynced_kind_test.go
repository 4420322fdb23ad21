package shard

import (
	"context"
	"strings"
	"testing"
	"time"

	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdvSharderKindThatNeverSyncsIsNamedAndHoldsUpNoOtherKind (adversary,
// issue 24 suspicion 2, the sharder's side): one kind of a ring cannot be
// listed by the sharder (RBAC forbids listing Secrets). The sharder must
// say so, naming the kind, and must not hold the ring's other kinds
// hostage: their objects are assigned to the live members (their
// assignment depends on nothing the missing kind holds).
func TestAdvSharderKindThatNeverSyncsIsNamedAndHoldsUpNoOtherKind(t *testing.T) {
	ring := testRing(t, configMaps, secrets)
	ns := ring.Namespace
	kube := clientset()
	const user = "lariat-test-sharder-unsynced"
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "sharder"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "patch"}},
		},
	}
	if _, err := kube.RbacV1().Roles(ns).Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Secrets(ns).Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(t.Context(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "sharder"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "sharder"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a := startMember(t, ring, "a")
	createConfigMaps(t, ns, "cm", 5)

	hook := new(logtest.Hook)
	o := sharderOptions(hook)
	o.Namespace = ns
	o.SyncTimeout = time.Second
	cfg := config()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	s := newSharder(t, cfg, ring, o)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()

	eventually(t, "the ConfigMaps assigned while Secrets cannot be listed", func() bool {
		for _, st := range configMapStates(t, ring) {
			if st.member != a.id {
				return false
			}
		}
		return true
	})
	eventually(t, "a warning naming the kind that cannot be listed", func() bool {
		for _, e := range hook.AllEntries() {
			msg := e.Message
			if err, ok := e.Data["error"].(error); ok {
				msg += " " + err.Error()
			}
			if strings.Contains(msg, "Secret") || strings.Contains(msg, "secrets") {
				return true
			}
		}
		return false
	})

	// Once it may list Secrets, they are assigned too.
	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch", "patch"}})
	if _, err := kube.RbacV1().Roles(ns).Update(t.Context(), role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 2*testTimeout, "the Secret assigned once it can be listed", func() bool {
		sec, err := kube.CoreV1().Secrets(ns).Get(t.Context(), "s1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return sec.Labels[AssignmentLabel(ring.Name)] == a.id
	})
}
