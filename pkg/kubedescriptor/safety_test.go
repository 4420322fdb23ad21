package kubedescriptor_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

var jobKind = schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}

// scheduler returns a scheduler with one descriptor of gvk built from opts
// (FieldManager filled in, and Clients unless set).
func scheduler(t testing.TB, gvk schema.GroupVersionKind, opts kubedescriptor.Options) *kvscheduler.Scheduler {
	t.Helper()
	if opts.Clients == nil {
		clients, err := client.NewSharedClientFactory(cp.Config(), nil)
		if err != nil {
			t.Fatal(err)
		}
		opts.Clients = clients
	}
	opts.FieldManager = fieldManager
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	d, err := kubedescriptor.New(gvk, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterDescriptor(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	return s
}

func job(ns string) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "migrate", Namespace: ns},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "migrate", Image: "busybox"}}}}}}
}

// TestDeletePropagatesAndChecksUID: a delete takes the object's dependents
// with it (background propagation, where a Job's default would orphan its
// pods), and a delete aimed at an object that was replaced behind the
// scheduler's back does not hit the replacement.
func TestDeletePropagatesAndChecksUID(t *testing.T) {
	ctx := t.Context()
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())

	// This control plane runs no garbage collector: an orphaning delete
	// leaves the Job with the "orphan" finalizer, a background one
	// removes it at once, a foreground one leaves "foregroundDeletion".
	for _, tc := range []struct {
		policy    *metav1.DeletionPropagation
		finalizer string // "" : gone at once
	}{{nil, ""}, {ptrTo(metav1.DeletePropagationForeground), metav1.FinalizerDeleteDependents}} {
		s := scheduler(t, jobKind, kubedescriptor.Options{PropagationPolicy: tc.policy})
		key := kubedescriptor.KeyFor(jobKind, ns, "migrate")
		commit(t, s.StartNBTransaction().SetValue(key, job(ns)))
		commit(t, s.StartNBTransaction().SetValue(key, nil))
		got, err := kube.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{})
		switch {
		case tc.finalizer == "" && !apierrors.IsNotFound(err):
			t.Fatalf("default delete left the Job (finalizers %v, err %v): its pods would be orphaned", finalizers(got), err)
		case tc.finalizer != "" && (err != nil || !slices.Contains(got.Finalizers, tc.finalizer)):
			t.Fatalf("%s delete: finalizers %v, err %v", *tc.policy, finalizers(got), err)
		}
		if tc.finalizer != "" {
			// Let the next round create it again.
			got.Finalizers = nil
			if _, err := kube.BatchV1().Jobs(ns).Update(ctx, got, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			waitGone(t, func() error { _, err := kube.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{}); return err })
		}
	}

	// Replaced behind the scheduler's back by someone else's object of the
	// same name: removing the value must not delete the replacement.
	s := scheduler(t, configMapKind, kubedescriptor.Options{})
	key := kubedescriptor.KeyFor(configMapKind, ns, "web-config")
	commit(t, s.StartNBTransaction().SetValue(key, configMap(ns)))
	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, "web-config", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config", Namespace: ns}, Data: map[string]string{"owner": "someone else"}}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, _ = s.StartNBTransaction().SetValue(key, nil).Commit(ctx)
	if got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{}); err != nil || got.Data["owner"] != "someone else" {
		t.Fatalf("the replacement was deleted or changed: %v %v", got, err)
	}
}

// TestNoSilentTakeover: an object the scheduler did not create is not taken
// over by a forced apply; the value fails saying so, unless the descriptor
// adopts.
func TestNoSilentTakeover(t *testing.T) {
	ctx := t.Context()
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config", Namespace: ns}, Data: map[string]string{"greeting": "theirs"}}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	key := kubedescriptor.KeyFor(configMapKind, ns, "web-config")

	s := scheduler(t, configMapKind, kubedescriptor.Options{})
	_, err := s.StartNBTransaction().SetValue(key, configMap(ns)).Commit(ctx)
	if err == nil || !strings.Contains(err.Error(), "not managed by "+fieldManager) {
		t.Fatalf("applying over someone else's object: %v, want an error saying it is not managed by %s", err, fieldManager)
	}
	var notManaged *kubedescriptor.NotManagedError
	if st := s.GetValueStatus(key); st.State != kvscheduler.Failed && st.State != kvscheduler.Retrying || !errors.As(st.Error, &notManaged) {
		t.Fatalf("value status %+v", st)
	}
	if got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{}); err != nil || got.Data["greeting"] != "theirs" {
		t.Fatalf("their object was changed: %v %v", got, err)
	}

	adopting := scheduler(t, configMapKind, kubedescriptor.Options{Adopt: true})
	commit(t, adopting.StartNBTransaction().SetValue(key, configMap(ns)))
	got, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{})
	if err != nil || got.Data["greeting"] != "hello" || got.Labels[kubedescriptor.LabelManagedBy] != fieldManager {
		t.Fatalf("adopted object: %v %v", got, err)
	}
}

func ptrTo[T any](v T) *T { return &v }

func finalizers(j *batchv1.Job) []string {
	if j == nil {
		return nil
	}
	return j.Finalizers
}

func waitGone(t *testing.T, get func() error) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if apierrors.IsNotFound(get()) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("object not gone")
		}
	}
}
