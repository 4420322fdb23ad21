package operator_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/examples/webapp/operator"
	"github.com/lariat-dev/lariat/pkg/controlplane"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestStartsWithoutTheCRDAndPicksItUpLater runs the operator on a cluster
// without the WebApp CRD: it says so and keeps running, but holds its event
// loop's startup resync (no WebApps known is not "no WebApps"), and handles
// WebApps once the CRD is installed.
func TestStartsWithoutTheCRDAndPicksItUpLater(t *testing.T) {
	bare := controlplanetest.Start(t, controlplane.Options{})
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.WarnLevel)
	op, err := operator.New(operator.Options{Config: bare.Config(), Logger: log, SyncTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	warned := func(text string) bool {
		for _, e := range hook.AllEntries() {
			if e.Level <= logrus.WarnLevel && strings.Contains(e.Message, text) {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(time.Minute); !warned("WebApp CRD installed") || !warned("holding the startup resync"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no warnings about the missing CRD and the held resync; logged: %v", hook.AllEntries())
		}
	}
	if _, ok := op.Loop().History().Get(0); ok {
		t.Fatal("the startup resync ran without the WebApp kind")
	}
	select {
	case err := <-done:
		t.Fatalf("the operator stopped without the CRD: %v", err)
	default:
	}

	if err := controlplane.InstallCRDs(ctx, bare.Config(), "../../../crds"); err != nil {
		t.Fatal(err)
	}
	kube := controlplanetest.Clientset(bare.Config())
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	app := &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "late"},
		Spec: demov1.WebAppSpec{Image: "nginx", Replicas: ptr.To[int32](1), Port: 80}}
	// The operator's client finds the kind now that it is served.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if _, err = op.WebApps().Create(ctx, app); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	if _, err := waitForReason(ctx, op.WebApps(), "late", "web", operator.ReasonAvailable, 2*time.Minute); err != nil {
		t.Fatalf("the WebApp created after the CRD was installed: %v", err)
	}
}
