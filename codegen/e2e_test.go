package main

import (
	"path/filepath"
	"testing"
)

// operatorTest is what a new user writes after `go generate`: handlers on
// the generated controllers, run against the control plane Lariat starts,
// with the generated CRDs installed.
const operatorTest = `package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"

	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/condition"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"

	demov1 "example.com/demo/api/v1"
	demov1alpha1 "example.com/demo/api/v1alpha1"
	demoapply "example.com/demo/generated/applyconfiguration/api/v1"
	"example.com/demo/generated/controllers/demo.lariat.dev"
	democtl "example.com/demo/generated/controllers/demo.lariat.dev/v1"
)

var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	controlplanetest.Main(m, controlplane.Options{CRDDirs: []string{"../crds"}}, &cp)
}

func TestOperator(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := controlplanetest.Namespace(t, cp.Config())

	f, err := generic.NewFactoryFromConfig(cp.Config(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := demo.NewFactory(f)
	if err != nil {
		t.Fatal(err)
	}
	apps, err := d.Demo().V1().WebApp()
	if err != nil {
		t.Fatal(err)
	}
	clients, err := client.NewSharedClientFactory(cp.Config(), &client.SharedClientFactoryOptions{Scheme: f.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	applier, err := apply.New(clients, apply.Options{FieldManager: "demo-operator"})
	if err != nil {
		t.Fatal(err)
	}
	ready := condition.Cond("Ready")
	democtl.RegisterWebAppGeneratingHandler(ctx, apps, applier, ready, "config",
		func(app *demov1.WebApp, status demov1.WebAppStatus) ([]runtime.Object, demov1.WebAppStatus, error) {
			status.Selector = "app=" + app.Name
			return []runtime.Object{&corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-config"},
				Data:       map[string]string{"image": app.Spec.Image},
			}}, status, nil
		}, nil)
	// Conditions of wrangler's shape (not metav1.Condition) are set too.
	tasks, err := d.Demo().V1().Task()
	if err != nil {
		t.Fatal(err)
	}
	democtl.RegisterTaskStatusHandler(ctx, tasks, ready, "task",
		func(task *demov1.Task, status demov1.TaskStatus) (demov1.TaskStatus, error) {
			if task.Spec.Fail != "" {
				return status, errors.New(task.Spec.Fail)
			}
			return status, nil
		})
	if err := f.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for name, fail := range map[string]string{"ok": "", "bad": "boom"} {
		if _, err := tasks.Create(ctx, &demov1.Task{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: demov1.TaskSpec{Fail: fail},
		}); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]corev1.ConditionStatus{"ok": corev1.ConditionTrue, "bad": corev1.ConditionFalse} {
		for {
			task, err := tasks.Get(ctx, ns, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if c := task.Status.Conditions; len(c) == 1 && c[0].Type == "Ready" && c[0].Status == want && c[0].LastUpdateTime != "" &&
				(want == corev1.ConditionTrue || c[0].Message == "boom") {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("task %s: condition not set: %+v", name, task.Status)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}

	if _, err := apps.Create(ctx, &demov1.WebApp{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
		Spec:       demov1.WebAppSpec{Image: "nginx:1.27"},
	}); err != nil {
		t.Fatal(err)
	}
	for {
		app, err := apps.Get(ctx, ns, "shop", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ready.IsTrue(app.Status.Conditions) && app.Status.ObservedGeneration == app.Generation &&
			app.Status.Selector == "app=shop" && app.Spec.Replicas != nil && *app.Spec.Replicas == 1 {
			break // the CRD's default (replicas: 1) applied, status written
		}
		select {
		case <-ctx.Done():
			t.Fatalf("status not reached: %+v", app.Status)
		case <-time.After(20 * time.Millisecond):
		}
	}
	cms, err := clients.ForObject(&corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	child := &corev1.ConfigMap{}
	if err := cms.Get(ctx, ns, "shop-config", child, metav1.GetOptions{}); err != nil {
		t.Fatalf("generated child missing: %v", err)
	}
	if child.Data["image"] != "nginx:1.27" || len(child.OwnerReferences) != 1 {
		t.Fatalf("child: %+v", child)
	}

	// Server-side apply with the generated apply configuration.
	applied, err := apps.Apply(ctx, demoapply.WebApp("applied", ns).WithSpec(demoapply.WebAppSpec().WithImage("httpd:2")),
		metav1.ApplyOptions{FieldManager: "e2e", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if applied.Spec.Image != "httpd:2" || applied.ManagedFields[0].Manager != "e2e" {
		t.Fatalf("applied: %+v", applied)
	}
	// Kinds without client-gen's +genclient get apply configurations too.
	settings, err := d.Demo().V1().Setting()
	if err != nil {
		t.Fatal(err)
	}
	setting, err := settings.Apply(ctx, demoapply.Setting("mode", ns).WithValue("off"), metav1.ApplyOptions{FieldManager: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	if setting.Value != "off" {
		t.Fatalf("applied setting: %+v", setting)
	}

	// A kind served in two versions without conversion: written in one,
	// read and written in the other, stored in v1 (+kubebuilder:storageversion).
	alphaSettings, err := d.Demo().V1alpha1().Setting()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alphaSettings.Create(ctx, &demov1alpha1.Setting{
		ObjectMeta: metav1.ObjectMeta{Name: "both", Namespace: ns}, Value: "alpha",
	}); err != nil {
		t.Fatal(err)
	}
	asV1, err := settings.Get(ctx, ns, "both", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if asV1.Value != "alpha" {
		t.Fatalf("v1 reads %+v", asV1)
	}
	asV1.Value = "stable"
	if _, err := settings.Update(ctx, asV1); err != nil {
		t.Fatal(err)
	}
	asAlpha, err := alphaSettings.Get(ctx, ns, "both", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if asAlpha.Value != "stable" {
		t.Fatalf("v1alpha1 reads %+v", asAlpha)
	}
	crds, err := apiextensionsclient.NewForConfig(cp.Config())
	if err != nil {
		t.Fatal(err)
	}
	crd, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "settings.demo.lariat.dev", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := crd.Status.StoredVersions; len(got) != 1 || got[0] != "v1" {
		t.Fatalf("stored versions %q, want [v1]", got)
	}
}
`

// TestEndToEnd does what a new user does: go generate in a module of their
// own (with a replace to this checkout), build it, and run its operator's
// test against the control plane Lariat starts, with the generated CRDs.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module and starts a control plane")
	}
	dir := demoModule(t)
	goCmd(t, dir, "generate", "./...")
	writeFile(t, filepath.Join(dir, "e2e", "operator_test.go"), operatorTest)
	goCmd(t, dir, "mod", "tidy")
	goCmd(t, dir, "test", "-count=1", "./e2e")
}
