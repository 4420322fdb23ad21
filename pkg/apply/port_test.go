package apply_test

import (
	"errors"
	"net/netip"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/apply"
)

// Children that leave a NoDelete set are kept, and a later Apply without
// NoDelete still prunes them: they stay in the set's inventory.
func TestNoDeleteKeepsChildren(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "keep", NoDelete: true}
	if err := a.Apply(ctx, set, cm("a", "1"), cm("b", "1")); err != nil {
		t.Fatal(err)
	}
	plan, err := a.DryRun(ctx, set, cm("a", "1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Delete) != 0 || len(plan.Kept) != 1 || plan.Kept[0].Name != "b" {
		t.Fatalf("dry run of a NoDelete set: %+v, want b kept and nothing deleted", plan)
	}
	if err := a.Apply(ctx, set, cm("a", "1")); err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, set); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Fatalf("%s left a NoDelete set and was pruned: %v", name, err)
		}
	}
	set.NoDelete = false
	if err := a.Apply(ctx, set, cm("a", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("b, kept earlier, was not pruned once the set stopped keeping: %v", err)
	}
}

// NoDeleteKinds keeps only the named kinds; the others are pruned.
func TestNoDeleteKindsKeepsOnlyThoseKinds(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"k": "v"}}
	set := apply.Set{Owner: owner, ID: "kinds", NoDeleteKinds: []schema.GroupKind{{Kind: "Secret"}}}
	if err := a.Apply(ctx, set, cm("a", "1"), secret); err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, set, cm("c", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Secrets(ns).Get(ctx, "s", metav1.GetOptions{}); err != nil {
		t.Fatalf("the Secret of a no-delete kind was pruned: %v", err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the ConfigMap that left the set was not pruned: %v", err)
	}
}

func job(image string) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "migrate"}, Spec: batchv1.JobSpec{
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "m", Image: image}},
		}},
	}}
}

// A Job whose template changed cannot be updated: without RecreateKinds the
// apply fails and the Job stays; with it the Job is deleted (UID
// precondition) and created again with the new template.
func TestRecreateKindsReplacesJob(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "jobs"}
	if err := a.Apply(ctx, set, job("migrate:1")); err != nil {
		t.Fatal(err)
	}
	first, err := kube.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, set, job("migrate:2")); !apierrors.IsInvalid(err) {
		t.Fatalf("changing a Job's template without recreate: %v, want Invalid", err)
	}
	set.RecreateKinds = []schema.GroupKind{{Group: "batch", Kind: "Job"}}
	plan, err := a.DryRun(ctx, set, job("migrate:2"))
	if err != nil || len(plan.Recreate) != 1 {
		t.Fatalf("dry run: %+v, %v; want the Job in Recreate", plan, err)
	}
	if err := a.Apply(ctx, set, job("migrate:2")); err != nil {
		t.Fatalf("recreating the Job: %v", err)
	}
	got, err := kube.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.UID == first.UID || got.Spec.Template.Spec.Containers[0].Image != "migrate:2" {
		t.Fatalf("Job after recreate: uid %s (was %s), image %s", got.UID, first.UID, got.Spec.Template.Spec.Containers[0].Image)
	}
	if ref := metav1.GetControllerOf(got); ref == nil || ref.UID != owner.UID {
		t.Fatalf("recreated Job's controller: %+v", ref)
	}
}

func deployment(app string) *appsv1.Deployment {
	labels := map[string]string{"app": app}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:1"}}},
		},
	}}
}

// RecreateImmutable recreates an object rejected for an immutable field (a
// Deployment's selector), and leaves alone one rejected for anything else:
// recreating it would delete it and fail the create the same way.
func TestRecreateImmutableOnlyForImmutableFields(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "deploy", RecreateImmutable: true}
	if err := a.Apply(ctx, set, deployment("v1")); err != nil {
		t.Fatal(err)
	}
	first, err := kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bad := deployment("v1")
	bad.Spec.Replicas = ptr.To[int32](-1)
	if err := a.Apply(ctx, set, bad); !apierrors.IsInvalid(err) {
		t.Fatalf("an invalid replica count: %v, want Invalid", err)
	}
	if got, err := kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil || got.UID != first.UID {
		t.Fatalf("a Deployment rejected for a mutable field was recreated or lost: %v", err)
	}
	if err := a.Apply(ctx, set, deployment("v2")); err != nil {
		t.Fatalf("changing the selector with RecreateImmutable: %v", err)
	}
	got, err := kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.UID == first.UID || got.Spec.Selector.MatchLabels["app"] != "v2" {
		t.Fatalf("Deployment after recreate: uid %s (was %s), selector %v", got.UID, first.UID, got.Spec.Selector)
	}
}

// An object still there after the recreating delete (a finalizer holds it)
// gives ErrRecreatePending, and the next Apply creates it once it is gone.
func TestRecreatePendingWhileFinalized(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "jobs", RecreateKinds: []schema.GroupKind{{Group: "batch", Kind: "Job"}}}
	held := job("migrate:1")
	held.Finalizers = []string{"test.lariat.dev/hold"}
	if err := a.Apply(ctx, set, held); err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, set, job("migrate:2")); !errors.Is(err, apply.ErrRecreatePending) {
		t.Fatalf("recreating a held Job: %v, want ErrRecreatePending", err)
	}
	if _, err := kube.BatchV1().Jobs(ns).Patch(ctx, "migrate", "application/merge-patch+json",
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, set, job("migrate:2")); err != nil {
		t.Fatalf("applying once the held Job is gone: %v", err)
	}
	got, err := kube.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{})
	if err != nil || got.Spec.Template.Spec.Containers[0].Image != "migrate:2" {
		t.Fatalf("Job: %v", err)
	}
}

func service(clusterIP string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: corev1.ServiceSpec{
		ClusterIP: clusterIP,
		Ports:     []corev1.ServicePort{{Port: 5432}},
	}}
}

// otherIP returns ip with its last octet moved, in the same service range.
func otherIP(t *testing.T, ip string) string {
	t.Helper()
	addr, err := netip.ParseAddr(ip)
	if err != nil || !addr.Is4() {
		t.Fatalf("cluster IP %q is not IPv4", ip)
	}
	b := addr.As4()
	b[3] = b[3] ^ 0x40
	if b[3] == 0 || b[3] == 255 {
		b[3] = 77
	}
	return netip.AddrFrom4(b).String()
}

// A Service's cluster IP cannot change in place (the server answers "field
// is immutable" and "may not change once set"): RecreateImmutable
// recreates it with the new one.
func TestRecreateImmutableService(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "svc"}
	if err := a.Apply(ctx, set, service("")); err != nil {
		t.Fatal(err)
	}
	first, err := kube.CoreV1().Services(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := otherIP(t, first.Spec.ClusterIP)
	if err := a.Apply(ctx, set, service(want)); !apierrors.IsInvalid(err) {
		t.Fatalf("changing a Service's cluster IP without recreate: %v, want Invalid", err)
	}
	set.RecreateImmutable = true
	if err := a.Apply(ctx, set, service(want)); err != nil {
		t.Fatalf("recreating the Service: %v", err)
	}
	got, err := kube.CoreV1().Services(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.UID == first.UID || got.Spec.ClusterIP != want {
		t.Fatalf("Service after recreate: uid %s (was %s), cluster IP %s, want %s", got.UID, first.UID, got.Spec.ClusterIP, want)
	}
}

// RecreateKinds recreates only what the API server rejects for immutable
// fields: a Job rejected for a value no Job may have (a negative
// parallelism) would be rejected again when created, so deleting it would
// lose it. The error is returned and the Job stays.
func TestRecreateKindsKeepsAnObjectRejectedForAnotherReason(t *testing.T) {
	a, kube, ns, owner := setup(t)
	ctx := t.Context()
	set := apply.Set{Owner: owner, ID: "jobs", RecreateKinds: []schema.GroupKind{{Group: "batch", Kind: "Job"}}}
	if err := a.Apply(ctx, set, job("migrate:1")); err != nil {
		t.Fatal(err)
	}
	first, err := kube.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bad := job("migrate:1")
	bad.Spec.Parallelism = ptr.To[int32](-1)
	if err := a.Apply(ctx, set, bad); !apierrors.IsInvalid(err) {
		t.Fatalf("a negative parallelism: %v, want Invalid", err)
	}
	got, err := kube.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{})
	if err != nil || got.UID != first.UID {
		t.Fatalf("a Job rejected for a mutable field was deleted or recreated: %v", err)
	}
}
