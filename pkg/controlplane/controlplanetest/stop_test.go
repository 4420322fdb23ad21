package controlplanetest_test

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/generated/controllers/core"
	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

// probeEnv makes this test binary a probe package for
// TestMainStopsOperatorsFirst: its value says how TestProbe's operators
// are started ("run": as documented; "background": with a context that
// outlives the tests, as the README's pattern used to allow).
const probeEnv = "LARIAT_CONTROLPLANETEST_PROBE"

// connectionErrors are the log lines of clients left running against a
// stopped API server: client-go's (klog) and Lariat's informers' (logrus).
var connectionErrors = regexp.MustCompile(`connection refused|list/watch failed|dial tcp`)

// TestMainStopsOperatorsFirst runs a test package (this binary, as a
// probe) whose tests start operators on Main's control plane, and reads
// everything it logged: operators started as the package documents (Run,
// or t.Context()) have stopped before Main stops the control plane, so
// nothing logs a connection error. An operator started with a context
// that outlives the tests does, which shows the check sees such lines.
func TestMainStopsOperatorsFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two test processes with a control plane each")
	}
	if os.Getenv(probeEnv) != "" {
		t.Skip("in the probe")
	}
	probe := func(mode string) string {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestProbe$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), probeEnv+"="+mode)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestProbe") {
			t.Fatalf("probe (%s) failed: %v\n%s", mode, err, out)
		}
		return string(out)
	}
	if out := probe("run"); connectionErrors.MatchString(out) {
		t.Errorf("connection errors logged around Main's shutdown:\n%s", out)
	}
	if out := probe("background"); !connectionErrors.MatchString(out) {
		t.Logf("an operator outliving the tests logged no connection error this time (the check may be blind):\n%s", out)
	}
}

// TestProbe is the probe package's test: two operators on ConfigMaps of
// its namespace, one started for Run and one with t.Context(), each seeing
// a ConfigMap created.
func TestProbe(t *testing.T) {
	mode := os.Getenv(probeEnv)
	if mode == "" {
		t.Skip("run by TestMainStopsOperatorsFirst")
	}
	ns := controlplanetest.Namespace(t, cp.Config())
	start := func(ctx context.Context, seen chan<- string) error {
		f, err := generic.NewFactoryFromConfig(cp.Config(), nil, &generic.FactoryOptions{
			Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns}},
		})
		if err != nil {
			return err
		}
		c, err := core.NewFactory(f)
		if err != nil {
			return err
		}
		cms, err := c.Core().V1().ConfigMap()
		if err != nil {
			return err
		}
		cms.OnChange(ctx, "probe", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			if cm != nil {
				select {
				case seen <- key:
				default:
				}
			}
			return nil, nil
		})
		return f.Start(ctx, 1)
	}
	viaRun, viaContext := make(chan string, 1), make(chan string, 1)
	switch mode {
	case "run":
		controlplanetest.Run(t, func(ctx context.Context) error {
			if err := start(ctx, viaRun); err != nil {
				return err
			}
			<-ctx.Done()
			return nil
		})
		if err := start(t.Context(), viaContext); err != nil {
			t.Fatal(err)
		}
	default:
		for _, seen := range []chan string{viaRun, viaContext} {
			if err := start(context.Background(), seen); err != nil {
				t.Fatal(err)
			}
		}
	}
	kube := controlplanetest.Clientset(cp.Config())
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for _, seen := range []chan string{viaRun, viaContext} {
		select {
		case key := <-seen:
			if key != ns+"/probe" {
				t.Errorf("operator saw %s", key)
			}
		case <-wait.Done():
			t.Fatal("an operator did not see the ConfigMap")
		}
	}
}
