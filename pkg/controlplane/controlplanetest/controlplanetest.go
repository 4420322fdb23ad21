// Package controlplanetest starts a real control plane for one test and stops
// it when the test ends, the way net/http/httptest does for HTTP servers.
package controlplanetest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/controlplane"
)

// Start starts a control plane with opts for t and registers its Stop with
// t.Cleanup. It fails the test at once when the control plane cannot start;
// the error says why (for example, that `make controlplane` has to be run).
// When the test fails, the last lines of the API server's log are logged.
func Start(t testing.TB, opts controlplane.Options) *controlplane.ControlPlane {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	cp, err := controlplane.Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("start control plane: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kube-apiserver log tail:\n%s", cp.APIServerLogTail(30))
		}
		if err := cp.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	return cp
}

// Main starts one control plane for a whole test package, stores it in *cp,
// runs the package's tests and stops it. Call it from TestMain:
//
//	var cp *controlplane.ControlPlane
//
//	func TestMain(m *testing.M) { controlplanetest.Main(m, controlplane.Options{}, &cp) }
//
// Sharing one control plane keeps a package's tests fast; give each test its
// own namespace (see Namespace) so they do not see each other's objects,
// and scope each test's operator to it (generic.FactoryOptions with
// Cache.Default.Namespace), so that operators of different tests do not
// handle each other's objects.
//
// The control plane is stopped once every test has ended, cleanups
// included: operators started with t.Context(), or with Run, which waits
// for them, have stopped by then, and nothing logs connection errors
// against the stopped API server. An operator started with a context that
// outlives its test (context.Background()) is still running then.
func Main(m *testing.M, opts controlplane.Options, cp **controlplane.ControlPlane) {
	if opts.Logger == nil {
		l := logrus.New()
		l.SetLevel(logrus.WarnLevel)
		opts.Logger = l
	}
	started, err := controlplane.Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start control plane:", err)
		os.Exit(1)
	}
	*cp = started
	code := m.Run()
	if err := started.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop control plane:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// Namespace creates a namespace with a name unique to the test and returns
// its name. It is not deleted: the control plane has no controller manager
// to finish namespace deletion, and the control plane is thrown away anyway.
func Namespace(t testing.TB, cfg *rest.Config) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: namespacePrefix(t.Name())}}
	created, err := cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return created.Name
}

// namespacePrefix turns a test name into a valid namespace name prefix.
func namespacePrefix(testName string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	prefix := strings.Trim(b.String(), "-")
	if len(prefix) > 40 {
		prefix = strings.TrimRight(prefix[:40], "-")
	}
	return prefix + "-"
}

// Clientset returns a clientset for cfg without client-side throttling:
// client-go's default of 5 requests per second would make the writers of a
// test slower than the controllers it tests.
func Clientset(cfg *rest.Config) *kubernetes.Clientset {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = -1
	return kubernetes.NewForConfigOrDie(cfg)
}
