package kubedescriptor_test

import (
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestOrderedAfterOutlivesWhatItNames: a Deployment ordered after its
// ConfigMap (AnnotationOrderedAfter) waits for it, and stays on the API
// server when the ConfigMap is withdrawn; one that DependsOn the ConfigMap
// is deleted with it and waits (PENDING).
func TestOrderedAfterOutlivesWhatItNames(t *testing.T) {
	s, kube, ns := setup(t)
	ctx := t.Context()
	cmKey := kubedescriptor.KeyFor(configMapKind, ns, "web-config")
	depKey := kubedescriptor.KeyFor(deploymentKind, ns, "web")
	dep := kubedescriptor.OrderedAfter(deployment(ns), cmKey)
	delete(dep.Annotations, kubedescriptor.AnnotationDependsOn)

	rec := commit(t, s.StartNBTransaction().SetValue(depKey, dep))
	if st := s.GetValueStatus(depKey); st.State != kvscheduler.Pending || !slices.Equal(st.UnmetDependencies, []string{cmKey}) {
		t.Fatalf("deployment %+v, want PENDING for %s (record %v)", st, cmKey, rec)
	}
	rec = commit(t, s.StartNBTransaction().SetValue(cmKey, configMap(ns)))
	if got, want := executed(rec), []string{"CREATE " + cmKey, "CREATE " + depKey}; !slices.Equal(got, want) {
		t.Fatalf("executed %v, want %v", got, want)
	}

	commit(t, s.StartNBTransaction().SetValue(cmKey, nil))
	if st := s.GetValueStatus(depKey); st.State != kvscheduler.Configured {
		t.Fatalf("ordered-after deployment %+v, want CONFIGURED", st)
	}
	if _, err := kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Fatalf("ordered-after deployment gone with its ConfigMap: %v", err)
	}

	// The same with DependsOn (Requires): it goes with the ConfigMap.
	commit(t, s.StartNBTransaction().SetValue(cmKey, configMap(ns)).SetValue(depKey, deployment(ns)))
	commit(t, s.StartNBTransaction().SetValue(cmKey, nil))
	if st := s.GetValueStatus(depKey); st.State != kvscheduler.Pending {
		t.Fatalf("depends-on deployment %+v, want PENDING", st)
	}
	if _, err := kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("depends-on deployment still there after its ConfigMap went: %v", err)
	}
}
