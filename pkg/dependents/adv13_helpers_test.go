package dependents_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	democtl "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev/v1"
	"github.com/lariat-dev/lariat/internal/dependentstest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/dependents"
)

// Helpers of the thirteenth round of adversarial tests (adv13_*_test.go);
// those still open call advOpen (adv2_helpers_test.go).

// adv13AllBut are the rules of a registration's service account that may
// do everything on the kinds the tests use, but on ConfigMaps only the
// verbs cmVerbs.
func adv13AllBut(cmVerbs ...string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"demo.lariat.dev", "apps", "coordination.k8s.io", "events.k8s.io"},
			Resources: []string{"*"}, Verbs: []string{"*"}},
		{APIGroups: []string{""}, Resources: []string{"secrets", "services", "events", "namespaces", "pods"},
			Verbs: []string{"*"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: cmVerbs},
	}
}

// adv13User binds rules cluster-wide to a user named after the test and
// returns the control plane's config impersonating it.
func adv13User(t *testing.T, rules []rbacv1.PolicyRule) *rest.Config {
	t.Helper()
	kube := controlplanetest.Clientset(cp.Config())
	name := "adv13-" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 60 {
		name = name[:60]
	}
	ctx := t.Context()
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: name}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = kube.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = kube.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
	})
	cfg := rest.CopyConfig(cp.Config())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: name}
	return cfg
}

// adv13Ready tells whether the WebApp's condition is True.
func adv13Ready(t *testing.T, c democtl.WebAppController, ns, name string) bool {
	app, err := c.Get(t.Context(), ns, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	cond := dependents.DefaultCondition.Get(app.Status.Conditions)
	if cond == nil {
		t.Logf("%s/%s: no condition", ns, name)
		return false
	}
	if cond.Status != metav1.ConditionTrue {
		t.Logf("%s/%s: %s %s", ns, name, cond.Status, cond.Message)
	}
	return cond.Status == metav1.ConditionTrue
}

// adv13Logger logs to the test, warnings and errors only.
func adv13Logger(t *testing.T) *logrus.Logger {
	l := logrus.New()
	l.SetLevel(logrus.WarnLevel)
	l.SetOutput(adv13Writer{t})
	return l
}

type adv13Writer struct{ t *testing.T }

func (w adv13Writer) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// adv13StartConfigMaps registers advConfigMaps on cfg under fm, ConfigMaps
// only, logging warnings to the test.
func adv13StartConfigMaps(t *testing.T, cfg *rest.Config, fm string) (*dependents.Dependents, democtl.WebAppController) {
	t.Helper()
	return dependentstest.Start(t, t.Context(), cfg, nil, fm, advConfigMaps,
		dependents.Options{FieldManager: fm, Kinds: adv13CMKind, Logger: adv13Logger(t)})
}

// adv13Grant binds a ClusterRole allowing verbs on ConfigMaps to user.
func adv13Grant(t *testing.T, user string, verbs ...string) {
	t.Helper()
	kube := controlplanetest.Clientset(cp.Config())
	name := user + "-grant"
	if _, err := kube.RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: verbs}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(t.Context(), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = kube.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = kube.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
	})
}
