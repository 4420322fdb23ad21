package leader_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controller"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestKindThatNeverSyncsIsReportedWhileTheTermGoesOn (issue 24, suspicion
// 2): one kind of a leader's factory cannot sync (RBAC forbids listing
// Secrets). Once the sync timeout has passed, the kind is reported by name
// and the term goes on: Run does not return, the lease is kept, the other
// kind's handlers keep running and never read the unsynced kind's cache
// as "nothing exists", and the kind starts once it can be listed.
func TestKindThatNeverSyncsIsReportedWhileTheTermGoesOn(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	const user = "lariat-test-unsynced"
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "op"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
			Verbs: []string{"get", "list", "watch", "update", "patch"}}},
	}
	if _, err := kube.RbacV1().Roles(ns).Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(t.Context(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "op"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "op"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Secrets(ns).Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createCM(t, ns, "s1")

	log, hook := logtest.NewNullLogger()
	e, err := leader.New(kubernetes.NewForConfigOrDie(cp.Config()).CoordinationV1(), ns, "lease",
		leader.WithIdentity("unsynced"), leader.WithLeaseDuration(leaseDuration), leader.WithRenewDeadline(renewDeadline),
		leader.WithRetryPeriod(retryPeriod), leader.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	as := rest.CopyConfig(cp.Config())
	as.Impersonate = rest.ImpersonationConfig{UserName: user}
	const syncTimeout = 2 * time.Second
	f, err := generic.NewFactoryFromConfig(e.Fence(as), nil, e.FactoryOptions(&generic.FactoryOptions{
		Cache:      cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}, SyncTimeout: syncTimeout},
		Controller: controller.SharedControllerFactoryOptions{Logger: log},
	}))
	if err != nil {
		t.Fatal(err)
	}
	cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps", true, f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := generic.NewController[*corev1.Secret, *corev1.SecretList](corev1.SchemeGroupVersion.WithKind("Secret"), "secrets", true, f.ControllerFactory())
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu          sync.Mutex
		cmPasses    int
		sawNotFound bool
		secretSeen  bool
	)
	cms.OnChange(t.Context(), "reads-secrets", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm == nil {
			return nil, nil
		}
		_, err := secrets.Cache().Get(cm.Namespace, cm.Name)
		mu.Lock()
		defer mu.Unlock()
		cmPasses++
		if apierrors.IsNotFound(err) {
			sawNotFound = true
		}
		return nil, nil
	})
	secrets.OnChange(t.Context(), "secrets", func(_ string, s *corev1.Secret) (*corev1.Secret, error) {
		if s != nil {
			mu.Lock()
			secretSeen = true
			mu.Unlock()
		}
		return nil, nil
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx, func(ctx context.Context) error { return f.Run(ctx, 2) }) }()
	defer func() {
		cancel()
		<-done
	}()

	eventually(t, "the ConfigMap handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return cmPasses > 0
	})
	reported := func() bool {
		for _, en := range hook.AllEntries() {
			if strings.Contains(en.Message+" "+errString(en.Data["error"]), "v1/Secret") {
				return true
			}
		}
		return false
	}
	eventually(t, "v1/Secret reported by name, or Run returning", func() bool {
		select {
		case err := <-done:
			done <- err
			return true
		default:
		}
		return reported()
	})
	select {
	case err := <-done:
		done <- err
		t.Fatalf("Run returned once the sync timeout had passed, ending the term for one kind that cannot sync: %v", err)
	default:
	}
	if !e.Holding() {
		t.Error("the replica let its lease go because one kind could not sync")
	}

	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}})
	if _, err := kube.RbacV1().Roles(ns).Update(t.Context(), role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, 2*timeout, "the Secret handled once it can be listed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return secretSeen
	})
	mu.Lock()
	defer mu.Unlock()
	if sawNotFound {
		t.Error("the ConfigMap handler read the unsynced Secrets cache as NotFound")
	}
}

func errString(v any) string {
	if err, ok := v.(error); ok {
		return err.Error()
	}
	return ""
}
