package operator_test

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/examples/webapp/operator"
	demo "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// childUIDs maps "Kind/name" to the UID of every ConfigMap, Deployment and
// Service the operator manages in ns.
func childUIDs(t *testing.T, kube *kubernetes.Clientset, ns string) map[string]string {
	t.Helper()
	ctx := t.Context()
	sel := metav1.ListOptions{LabelSelector: "lariat.dev/managed-by"}
	out := map[string]string{}
	cms, err := kube.CoreV1().ConfigMaps(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range cms.Items {
		out["ConfigMap/"+o.Name] = string(o.UID)
	}
	deps, err := kube.AppsV1().Deployments(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range deps.Items {
		out["Deployment/"+o.Name] = string(o.UID)
	}
	svcs, err := kube.CoreV1().Services(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range svcs.Items {
		out["Service/"+o.Name] = string(o.UID)
	}
	return out
}

// TestRestartWithoutListingWebAppsDeletesNothing restarts the operator while
// its identity may not list WebApps: a kind that cannot be listed is not a
// kind without objects, so nothing is deleted; once listing is allowed again
// it converges without re-creating anything.
func TestRestartWithoutListingWebAppsDeletesNothing(t *testing.T) {
	ctx := t.Context()
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	user := "partial-view-operator-" + ns
	roleName := "webapp-partial-" + ns
	rules := func(webappVerbs ...string) []rbacv1.PolicyRule {
		return []rbacv1.PolicyRule{
			{APIGroups: []string{"demo.lariat.dev"}, Resources: []string{"webapps"}, Verbs: webappVerbs},
			{APIGroups: []string{"demo.lariat.dev"}, Resources: []string{"webapps/status"}, Verbs: []string{"update"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps", "services"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		}
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: roleName}, Rules: rules("get", "list", "watch")}
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: roleName},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: roleName},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: user}}}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	setWebAppVerbs := func(verbs ...string) {
		t.Helper()
		r, err := kube.RbacV1().ClusterRoles().Get(ctx, roleName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r.Rules = rules(verbs...)
		if _, err := kube.RbacV1().ClusterRoles().Update(ctx, r, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	asOperator := rest.CopyConfig(cp.Config())
	asOperator.Impersonate = rest.ImpersonationConfig{UserName: user}
	run := func(log *logrus.Logger) (*operator.Operator, func() error) {
		t.Helper()
		return startOperator(t, operator.Options{Config: asOperator, Logger: log, Namespace: ns, SyncTimeout: time.Second,
			NodePorts: operator.PortRange{First: 32100, Last: 32199}})
	}

	quiet := logrus.New()
	quiet.SetLevel(logrus.ErrorLevel)
	_, stop := run(quiet)
	demoFactory, err := demo.NewFactoryFromConfig(cp.Config())
	if err != nil {
		t.Fatal(err)
	}
	webapps, err := demoFactory.Demo().V1().WebApp()
	if err != nil {
		t.Fatal(err)
	}
	for _, app := range []*demov1.WebApp{
		{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: demov1.WebAppSpec{Image: "nginx", Replicas: ptr.To[int32](1), Port: 80, DependsOn: []string{"db"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Spec: demov1.WebAppSpec{Image: "postgres", Replicas: ptr.To[int32](1), Port: 5432}},
	} {
		if _, err := webapps.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"db", "web"} {
		if _, err := waitForReason(ctx, webapps, ns, name, operator.ReasonAvailable, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	before := childUIDs(t, kube, ns)
	if len(before) != 6 {
		t.Fatalf("children before the restart: %v", before)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// Restarted while WebApps may be read one by one but not listed.
	setWebAppVerbs("get")
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.WarnLevel)
	op, _ := run(log)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		held := false
		for _, e := range hook.AllEntries() {
			held = held || strings.Contains(e.Message, "holding the startup resync") && strings.Contains(e.Message, "WebApp")
		}
		if held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no warning naming the WebApp kind; logged: %v", hook.AllEntries())
		}
	}
	// Before the fix, the loop's startup resync ran here without WebApps
	// and the scheduler deleted all six children within a second.
	for range 30 {
		if got := childUIDs(t, kube, ns); len(got) != len(before) {
			t.Fatalf("children deleted while WebApps could not be listed: before %v, now %v", before, got)
		}
		time.Sleep(100 * time.Millisecond)
	}

	setWebAppVerbs("get", "list", "watch")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if rec, ok := op.Loop().History().Get(0); ok && !rec.ProcessingEnd.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no startup resync after listing was allowed again; loop health %v", op.Loop().Health())
		}
	}
	for _, key := range []string{operator.ConfigMapKey(ns, "web"), operator.DeploymentKey(ns, "web"), operator.ServiceKey(ns, "web"),
		operator.ConfigMapKey(ns, "db"), operator.DeploymentKey(ns, "db"), operator.ServiceKey(ns, "db")} {
		if st := op.Scheduler().GetValueStatus(key); st.State != kvscheduler.Configured {
			t.Errorf("%s: %s (%v), want CONFIGURED", key, st.State, st.Error)
		}
	}
	if after := childUIDs(t, kube, ns); !maps.Equal(before, after) {
		t.Fatalf("children re-created: before %v, after %v", before, after)
	}
}
