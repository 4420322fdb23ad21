package kubedescriptor_test

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestDriftIsJudgedOnOwnedFields: a resync repairs what changed in the fields
// the descriptor applies, zero values included, and leaves alone what other
// field managers added (no re-apply on every refresh).
func TestDriftIsJudgedOnOwnedFields(t *testing.T) {
	ctx := t.Context()
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	deps := scheduler(t, deploymentKind, kubedescriptor.Options{Namespace: ns})
	jobs := scheduler(t, jobKind, kubedescriptor.Options{Namespace: ns})

	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27",
					Env: []corev1.EnvVar{{Name: "MODE", Value: "prod"}}}}},
			}}}
	depKey := kubedescriptor.KeyFor(deploymentKind, ns, "web")
	commit(t, deps.StartNBTransaction().SetValue(depKey, dep))
	jb := job(ns)
	jb.Spec.Suspend = ptr.To(false)
	jobKey := kubedescriptor.KeyFor(jobKind, ns, "migrate")
	commit(t, jobs.StartNBTransaction().SetValue(jobKey, jb))

	resync := func(s *kvscheduler.Scheduler) []string {
		t.Helper()
		return executed(commit(t, s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync)))
	}
	if ops := resync(deps); len(ops) != 0 {
		t.Fatalf("resync right after the apply executed %v", ops)
	}

	// Another field manager adds an env entry and an annotation: not drift.
	other := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","annotations":{"team":"sre"}},` +
		`"spec":{"template":{"spec":{"containers":[{"name":"web","env":[{"name":"DEBUG","value":"1"}]}]}}}}`)
	if _, err := kube.AppsV1().Deployments(ns).Patch(ctx, "web", types.ApplyPatchType, other,
		metav1.PatchOptions{FieldManager: "sidecar-injector"}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if ops := resync(deps); len(ops) != 0 {
			t.Fatalf("another manager's env entry and annotation caused %v", ops)
		}
	}

	// Zero values the descriptor applies are repaired when changed.
	live, err := kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Spec.Replicas = ptr.To[int32](3)
	if _, err := kube.AppsV1().Deployments(ns).Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ops := resync(deps); len(ops) != 1 {
		t.Fatalf("replicas 0 -> 3 out of band: resync executed %v, want one update", ops)
	}
	live, err = kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil || *live.Spec.Replicas != 0 {
		t.Fatalf("replicas not repaired: %v %v", live.Spec.Replicas, err)
	}
	if env := live.Spec.Template.Spec.Containers[0].Env; len(env) != 2 {
		t.Fatalf("the repair removed the other manager's env entry: %v", env)
	}

	liveJob, err := kube.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	liveJob.Spec.Suspend = ptr.To(true)
	if _, err := kube.BatchV1().Jobs(ns).Update(ctx, liveJob, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ops := resync(jobs); len(ops) != 1 {
		t.Fatalf("suspend false -> true out of band: resync executed %v, want one update", ops)
	}
	if liveJob, err = kube.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{}); err != nil || *liveJob.Spec.Suspend {
		t.Fatalf("suspend not repaired: %v %v", liveJob.Spec.Suspend, err)
	}

	// After a restart nothing records what was applied: a dry run of the
	// desired value stands in for it, so an unchanged object is not
	// re-applied and a changed one is.
	restarted := scheduler(t, deploymentKind, kubedescriptor.Options{Namespace: ns})
	before, err := kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ops := executed(commit(t, restarted.StartNBTransaction().WithResync(kvscheduler.FullResync).SetValue(depKey, dep))); len(ops) != 0 {
		t.Fatalf("first resync after a restart executed %v", ops)
	}
	if after, err := kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil || after.ResourceVersion != before.ResourceVersion {
		t.Fatalf("first resync after a restart wrote the Deployment: %v", err)
	}
	before.Spec.Replicas = ptr.To[int32](2)
	if _, err := kube.AppsV1().Deployments(ns).Update(ctx, before, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ops := resync(restarted); len(ops) != 1 {
		t.Fatalf("replicas changed after a restart: resync executed %v, want one update", ops)
	}
}

// TestFailedDryRunIsNotRepeated: when the dry run that stands in for a
// missing apply record fails (the desired value is invalid), it is not
// asked again by every resync while the live object stays as it is.
func TestFailedDryRunIsNotRepeated(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	key := kubedescriptor.KeyFor(configMapKind, ns, "cfg")
	cm := func(dataKey string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: ns}, Data: map[string]string{dataKey: "v"}}
	}
	commit(t, scheduler(t, configMapKind, kubedescriptor.Options{}).StartNBTransaction().SetValue(key, cm("good")))

	// A restarted operator whose desired value the server rejects.
	var dryRuns atomic.Int32
	s := schedulerVia(t, configMapKind, func(next http.RoundTripper, req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodPatch && req.URL.Query().Get("dryRun") != "" {
			dryRuns.Add(1)
		}
		return next.RoundTrip(req)
	})
	if _, err := s.StartNBTransaction().SetValue(key, cm("bad key!")).Commit(t.Context()); err == nil {
		t.Fatal("the server accepted an invalid data key")
	}
	for range 3 {
		_, _ = s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(t.Context())
	}
	if n := dryRuns.Load(); n != 1 {
		t.Fatalf("3 resyncs of an unchanged object sent %d dry runs, want 1", n)
	}
}

// TestLiveObjectIsComparedWithTheNewValue: an object the scheduler holds as
// read from the cluster (its delete failed) is not in sync with a new desired
// value just because it still holds what an earlier value applied.
func TestLiveObjectIsComparedWithTheNewValue(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	key := kubedescriptor.KeyFor(configMapKind, ns, "cfg")
	cm := func(v string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: ns}, Data: map[string]string{"k": v}}
	}
	s := schedulerVia(t, configMapKind, func(next http.RoundTripper, req *http.Request) (*http.Response, error) {
		if req.Method == http.MethodDelete {
			return nil, errors.New("deletes are down")
		}
		return next.RoundTrip(req)
	})
	commit(t, s.StartNBTransaction().SetValue(key, cm("1")))
	if _, err := s.StartNBTransaction().SetValue(key, nil).Commit(t.Context()); err == nil {
		t.Fatal("the delete succeeded")
	}
	// The resync reads the object back (as a live object: it has no
	// desired value) and fails to delete it again.
	_, _ = s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(t.Context())

	commit(t, s.StartNBTransaction().SetValue(key, cm("2")))
	live, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), "cfg", metav1.GetOptions{})
	if err != nil || live.Data["k"] != "2" {
		t.Fatalf("after the value changed to k=2 the object holds %v (%v)", live.Data, err)
	}
}

// schedulerVia is scheduler for gvk with every request going through rt
// (next is the real transport).
func schedulerVia(t *testing.T, gvk schema.GroupVersionKind, rt func(next http.RoundTripper, req *http.Request) (*http.Response, error)) *kvscheduler.Scheduler {
	t.Helper()
	cfg := rest.CopyConfig(cp.Config())
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) { return rt(next, req) })
	})
	clients, err := client.NewSharedClientFactory(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return scheduler(t, gvk, kubedescriptor.Options{Clients: clients})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
