package operator_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/examples/webapp/operator"
	demo "github.com/lariat-dev/lariat/generated/controllers/demo.lariat.dev"
	"github.com/lariat-dev/lariat/pkg/apply"
	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// readManifest decodes a multi-document YAML file.
func readManifest(t *testing.T, path string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []runtime.Object
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatal(err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// TestRBACManifestIsEnough runs the operator as the service account of
// deploy/rbac.yaml, under leader election with its Lease in the operator's
// namespace: everything it does must be allowed by that manifest.
func TestRBACManifestIsEnough(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	applier, err := apply.New(clients, apply.Options{FieldManager: "rbac-test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := applier.Apply(ctx, apply.Set{ID: "webapp-rbac"}, readManifest(t, "../deploy/rbac.yaml")...); err != nil {
		t.Fatal(err)
	}

	ns := controlplanetest.Namespace(t, cp.Config())
	asOperator := rest.CopyConfig(cp.Config())
	asOperator.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:webapp-system:webapp-operator"}
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	e, err := leader.New(kubernetes.NewForConfigOrDie(asOperator).CoordinationV1(), "webapp-system", "webapp-operator", leader.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- e.Run(ctx, func(ctx context.Context) error {
			op, err := operator.New(operator.Options{Config: e.Fence(asOperator), Logger: log,
				NodePorts: operator.PortRange{First: 32000, Last: 32099}})
			if err != nil {
				return err
			}
			return op.Run(ctx)
		})
	}()

	// The WebApps are created as the admin, like a user would.
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
			t.Fatalf("as the service account: %v; leader %q", err, e.Leader())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
