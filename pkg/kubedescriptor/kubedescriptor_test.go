package kubedescriptor_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) { controlplanetest.Main(m, controlplane.Options{}, &cp) }

const fieldManager = "kv-test"

var (
	configMapKind  = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	serviceKind    = schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	deploymentKind = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
)

// setup returns a scheduler with descriptors for ConfigMaps, Services and
// Deployments that retrieve from the test's own namespace, a plain
// clientset to act behind the scheduler's back, and the namespace.
func setup(t *testing.T) (*kvscheduler.Scheduler, *kubernetes.Clientset, string) {
	t.Helper()
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	kube := controlplanetest.Clientset(cp.Config())
	ns := controlplanetest.Namespace(t, cp.Config())
	s, err := kvscheduler.New(kvscheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	for _, gvk := range []schema.GroupVersionKind{configMapKind, serviceKind, deploymentKind} {
		d, err := kubedescriptor.New(gvk, kubedescriptor.Options{Clients: clients, FieldManager: fieldManager, Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RegisterDescriptor(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	return s, kube, ns
}

func configMap(ns string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config", Namespace: ns},
		Data: map[string]string{"greeting": "hello"}}
}

func service(ns string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
}

func deployment(ns string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "nginx:1.27",
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}},
				}}},
			},
		}}
	return kubedescriptor.DependsOn(d, kubedescriptor.KeyFor(configMapKind, ns, "web-config"))
}

func commit(t testing.TB, txn *kvscheduler.Txn) *kvscheduler.TxnRecord {
	t.Helper()
	rec, err := txn.Commit(t.Context())
	if err != nil {
		t.Fatalf("commit: %v\n%v", err, rec)
	}
	return rec
}

// executed lists a record's executed operations as "OP key".
func executed(rec *kvscheduler.TxnRecord) []string {
	var out []string
	for _, op := range rec.Executed {
		out = append(out, op.Operation.String()+" "+op.Key)
	}
	return out
}

// versions reads the resourceVersions of the three objects ("" when gone).
func versions(t *testing.T, kube *kubernetes.Clientset, ns string) [3]string {
	t.Helper()
	ctx := t.Context()
	var out [3]string
	check := func(i int, m metav1.Object, err error) {
		if apierrors.IsNotFound(err) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := m.GetLabels()[kubedescriptor.LabelManagedBy]; got != fieldManager {
			t.Errorf("%s has management label %q", m.GetName(), got)
		}
		out[i] = m.GetResourceVersion()
	}
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{})
	check(0, cm, err)
	svc, err := kube.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
	check(1, svc, err)
	dep, err := kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	check(2, dep, err)
	return out
}

func TestDeploymentWaitsForConfigMapAndDriftIsRepaired(t *testing.T) {
	s, kube, ns := setup(t)
	ctx := t.Context()
	cmKey := kubedescriptor.KeyFor(configMapKind, ns, "web-config")
	svcKey := kubedescriptor.KeyFor(serviceKind, ns, "web")
	depKey := kubedescriptor.KeyFor(deploymentKind, ns, "web")
	if want := "apps/Deployment/" + ns + "/web"; depKey != want {
		t.Fatalf("key %q, want %q", depKey, want)
	}

	// The Deployment comes first: it waits for its ConfigMap.
	commit(t, s.StartNBTransaction().SetValue(depKey, deployment(ns)))
	st := s.GetValueStatus(depKey)
	if st.State != kvscheduler.Pending || !slices.Equal(st.UnmetDependencies, []string{cmKey}) {
		t.Fatalf("deployment status %+v, want PENDING on %s", st, cmKey)
	}
	if _, err := kube.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the pending deployment exists: %v", err)
	}

	// The ConfigMap (and the Service) arrive: the Deployment follows.
	rec := commit(t, s.StartNBTransaction().SetValue(cmKey, configMap(ns)).SetValue(svcKey, service(ns)))
	ops := executed(rec)
	if i, j := slices.Index(ops, "CREATE "+cmKey), slices.Index(ops, "CREATE "+depKey); i < 0 || j < i {
		t.Fatalf("executed %v: the configmap must be created before the deployment", ops)
	}
	for _, k := range []string{cmKey, svcKey, depKey} {
		if st := s.GetValueStatus(k); st.State != kvscheduler.Configured {
			t.Fatalf("%s: %+v", k, st)
		}
	}
	before := versions(t, kube, ns)
	if slices.Contains(before[:], "") {
		t.Fatalf("objects missing: %v", before)
	}

	// Committing the same objects again changes nothing.
	rec = commit(t, s.StartNBTransaction().SetValue(cmKey, configMap(ns)).
		SetValue(svcKey, service(ns)).SetValue(depKey, deployment(ns)))
	if len(rec.Executed) != 0 {
		t.Fatalf("re-commit executed %v", executed(rec))
	}
	// Neither does a resync: the live objects, with their server-side
	// defaults and status, are equivalent to the desired ones.
	rec = commit(t, s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync))
	if len(rec.Executed) != 0 || len(rec.Errors) != 0 {
		t.Fatalf("resync without drift executed %v, errors %v", executed(rec), rec.Errors)
	}
	if after := versions(t, kube, ns); after != before {
		t.Fatalf("resourceVersions changed from %v to %v", before, after)
	}

	// After that resync, dropping a label from the desired ConfigMap still
	// removes it from the server, then it comes back.
	labelled := configMap(ns)
	labelled.Labels = map[string]string{"tier": "web"}
	commit(t, s.StartNBTransaction().SetValue(cmKey, labelled))
	commit(t, s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync))
	rec = commit(t, s.StartNBTransaction().SetValue(cmKey, configMap(ns)))
	if !slices.Equal(executed(rec), []string{"UPDATE " + cmKey}) {
		t.Fatalf("dropping a label executed %v", executed(rec))
	}
	if cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{}); err != nil || cm.Labels["tier"] != "" {
		t.Fatalf("label not removed: %v %v", cm.Labels, err)
	}

	// Someone deletes the ConfigMap; a downstream resync restores it.
	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, "web-config", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	rec = commit(t, s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync))
	if !slices.Contains(executed(rec), "CREATE "+cmKey) {
		t.Fatalf("resync executed %v", executed(rec))
	}
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{})
	if err != nil || cm.Data["greeting"] != "hello" {
		t.Fatalf("configmap not restored: %v %v", cm, err)
	}

	// Someone edits the Service's selector; a resync puts it back.
	svc, err := kube.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.Selector = map[string]string{"app": "other"}
	if _, err := kube.CoreV1().Services(ns).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rec = commit(t, s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync))
	if !slices.Contains(executed(rec), "UPDATE "+svcKey) {
		t.Fatalf("resync executed %v", executed(rec))
	}
	if svc, err = kube.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil || svc.Spec.Selector["app"] != "web" {
		t.Fatalf("service not repaired: %v %v", svc.Spec.Selector, err)
	}

	// Removing values deletes their objects; the Deployment goes with the
	// ConfigMap it depends on and waits for it again.
	commit(t, s.StartNBTransaction().SetValue(svcKey, nil).SetValue(cmKey, nil))
	got := versions(t, kube, ns)
	if got[0] != "" || got[1] != "" || got[2] != "" {
		t.Fatalf("objects left after removal: %v", got)
	}
	if st := s.GetValueStatus(depKey); st.State != kvscheduler.Pending {
		t.Fatalf("deployment status %+v, want PENDING", st)
	}
}

func TestInvalidValues(t *testing.T) {
	s, _, ns := setup(t)
	ctx := context.Background()
	cmKey := kubedescriptor.KeyFor(configMapKind, ns, "other-name")
	_, _ = s.StartNBTransaction().SetValue(cmKey, configMap(ns)).Commit(ctx)
	if st := s.GetValueStatus(cmKey); st.State != kvscheduler.Invalid {
		t.Fatalf("a value under another object's key: %+v", st)
	}
	svcKey := kubedescriptor.KeyFor(serviceKind, ns, "web-config")
	_, _ = s.StartNBTransaction().SetValue(svcKey, configMap(ns)).Commit(ctx)
	if st := s.GetValueStatus(svcKey); st.State != kvscheduler.Invalid {
		t.Fatalf("a configmap under a service key: %+v", st)
	}
}

func ExampleKeyFor() {
	fmt.Println(kubedescriptor.KeyFor(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, "shop", "web"))
	fmt.Println(kubedescriptor.KeyFor(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "", "shop"))
	ref, err := kubedescriptor.ParseKey("core/ConfigMap/shop/web-config")
	fmt.Printf("group=%q kind=%s namespace=%s name=%s err=%v\n", ref.Group, ref.Kind, ref.Namespace, ref.Name, err)
	// Output:
	// apps/Deployment/shop/web
	// core/Namespace/_/shop
	// group="" kind=ConfigMap namespace=shop name=web-config err=<nil>
}
