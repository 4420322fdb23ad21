package controlplane

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func quietOptions(t *testing.T) Options {
	log := logrus.New()
	log.SetOutput(testLogWriter{t})
	return Options{Logger: log}
}

type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func startForTest(t *testing.T, opts Options) *ControlPlane {
	t.Helper()
	cp, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	return cp
}

func clientset(t *testing.T, cp *ControlPlane) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cp.Config())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func createConfigMap(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Data:       map[string]string{"key": "value"},
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create configmap %s: %v", name, err)
	}
}

func TestVersionMatchesBuildModule(t *testing.T) {
	data, err := os.ReadFile("../../scripts/controlplane/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"k8s.io/kubernetes " + KubernetesVersion, "go.etcd.io/etcd/server/v3 " + EtcdVersion} {
		if !strings.Contains(string(data), want) {
			t.Errorf("scripts/controlplane/go.mod does not require %q; keep the constants and the module in step", want)
		}
	}
}

func TestMissingBinariesNameTheDirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := Start(t.Context(), Options{BinDir: dir})
	if !errors.Is(err, ErrBinaryNotFound) {
		t.Fatalf("want ErrBinaryNotFound, got %v", err)
	}
	for _, want := range []string{dir, "make controlplane", DirEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestDefaultBinDirHonoursEnv(t *testing.T) {
	t.Setenv(DirEnv, "/some/where")
	if dir, err := DefaultBinDir(); err != nil || dir != "/some/where" {
		t.Fatalf("DefaultBinDir() = %q, %v", dir, err)
	}
	t.Setenv(DirEnv, "")
	t.Setenv("XDG_CACHE_HOME", "/cache")
	if dir, _ := DefaultBinDir(); dir != "/cache/lariat/controlplane/"+KubernetesVersion {
		t.Fatalf("DefaultBinDir() = %q", dir)
	}
}

func TestStartServesAndStopLeavesNothing(t *testing.T) {
	t.Parallel()
	cp, err := Start(t.Context(), quietOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	etcdPID, apiserverPID := cp.PIDs()
	if etcdPID == 0 || apiserverPID == 0 {
		t.Fatalf("PIDs() = %d, %d; want both running", etcdPID, apiserverPID)
	}

	// The admin identity works through both the rest.Config and the
	// kubeconfig file, and RBAC is on: an anonymous request is refused.
	cs := clientset(t, cp)
	createConfigMap(t, cs, "hello")
	fileConfig, err := clientcmd.BuildConfigFromFlags("", cp.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	fileClient := kubernetes.NewForConfigOrDie(fileConfig)
	if _, err := fileClient.CoreV1().ConfigMaps("default").Get(t.Context(), "hello", metav1.GetOptions{}); err != nil {
		t.Fatalf("kubeconfig client: %v", err)
	}
	anonymous := cp.Config()
	anonymous.CertData, anonymous.KeyData = nil, nil
	_, err = kubernetes.NewForConfigOrDie(anonymous).CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("anonymous list: want Forbidden under RBAC, got %v", err)
	}

	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}
	for name, pid := range map[string]int{"etcd": etcdPID, "kube-apiserver": apiserverPID} {
		if processAlive(pid) {
			t.Errorf("%s (pid %d) still running after Stop", name, pid)
		}
	}
	if _, err := os.Stat(cp.Dir()); !os.IsNotExist(err) {
		t.Errorf("temporary directory %s left behind (stat: %v)", cp.Dir(), err)
	}
	if err := cp.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := cp.RestartAPIServer(t.Context()); !errors.Is(err, ErrStopped) {
		t.Errorf("RestartAPIServer after Stop: want ErrStopped, got %v", err)
	}
}

func TestTwoControlPlanesAtOnce(t *testing.T) {
	t.Parallel()
	var (
		wg   sync.WaitGroup
		cps  [2]*ControlPlane
		errs [2]error
	)
	for i := range cps {
		wg.Go(func() { cps[i], errs[i] = Start(t.Context(), quietOptions(t)) })
	}
	wg.Wait()
	for i, cp := range cps {
		if cp != nil {
			t.Cleanup(func() { _ = cp.Stop() })
		}
		if errs[i] != nil {
			t.Fatalf("control plane %d: %v", i, errs[i])
		}
	}
	if cps[0].URL() == cps[1].URL() || cps[0].EtcdURL() == cps[1].EtcdURL() {
		t.Fatalf("control planes share an address: %s %s", cps[0].URL(), cps[1].URL())
	}
	createConfigMap(t, clientset(t, cps[0]), "only-in-first")
	_, err := clientset(t, cps[1]).CoreV1().ConfigMaps("default").Get(t.Context(), "only-in-first", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("second control plane sees the first one's object: %v", err)
	}
}

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.test.lariat.dev
spec:
  group: test.lariat.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
---
`

func TestCRDsAreServedWhenStartReturns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "widgets.yaml"), []byte(widgetCRD), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("not a manifest"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := quietOptions(t)
	opts.CRDDirs = []string{dir}
	cp := startForTest(t, opts)

	// No polling: the CRD must be usable the moment Start returns.
	gvr := schema.GroupVersionResource{Group: "test.lariat.dev", Version: "v1", Resource: "widgets"}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.lariat.dev/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": "w1", "namespace": "default"},
		"spec":       map[string]any{"size": int64(3)},
	}}
	dyn := dynamic.NewForConfigOrDie(cp.Config())
	if _, err := dyn.Resource(gvr).Namespace("default").Create(t.Context(), widget, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Widget right after Start: %v", err)
	}

	// Installing the same directory again updates in place.
	if err := InstallCRDs(t.Context(), cp.Config(), dir); err != nil {
		t.Fatalf("reinstall: %v", err)
	}
}

func TestReadCRDFileRejectsOtherKinds(t *testing.T) {
	dir := t.TempDir()
	content := widgetCRD + "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
	if err := os.WriteFile(filepath.Join(dir, "mixed.yaml"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	// The manifests are read before anything is sent: nothing listens here.
	err := InstallCRDs(t.Context(), &rest.Config{Host: "http://127.0.0.1:1"}, dir)
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "mixed.yaml") ||
		!strings.Contains(err.Error(), "document 2") || !strings.Contains(err.Error(), "ConfigMap") {
		t.Fatalf("want an error naming the directory, file, document and kind, got %v", err)
	}
}

func TestRestartsKeepData(t *testing.T) {
	t.Parallel()
	cp := startForTest(t, quietOptions(t))
	cs := clientset(t, cp)
	createConfigMap(t, cs, "survivor")
	get := func(ctx context.Context) error {
		_, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "survivor", metav1.GetOptions{})
		return err
	}

	_, oldPID := cp.PIDs()
	if err := cp.RestartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, newPID := cp.PIDs(); newPID == oldPID || processAlive(oldPID) {
		t.Fatalf("kube-apiserver was not restarted: pid %d -> %d", oldPID, newPID)
	}
	if err := get(t.Context()); err != nil {
		t.Fatalf("after API server restart: %v", err)
	}

	began := time.Now()
	if err := cp.StopEtcd(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd stopped in %s", time.Since(began))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if err := get(ctx); err == nil {
		t.Fatal("read succeeded while etcd was down")
	}
	if err := cp.StartEtcd(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The API server reconnects to etcd on its own; allow it a moment.
	var lastErr error
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		lastErr = get(ctx)
		return lastErr == nil, nil
	})
	if err != nil {
		t.Fatalf("after etcd restart: %v (last error: %v)", err, lastErr)
	}
	t.Logf("served again %s after etcd stopped", time.Since(began))
}

func TestEarlyExitReportsLogLines(t *testing.T) {
	// Not parallel: assertNoOwnDirs needs to be alone.
	opts := quietOptions(t)
	opts.APIServerFlags = []string{"--no-such-flag=1"}
	cp, err := Start(t.Context(), opts)
	if err == nil {
		_ = cp.Stop()
		t.Fatal("Start succeeded with an unknown API server flag")
	}
	for _, want := range []string{"kube-apiserver exited early", "unknown flag: --no-such-flag"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
	assertNoOwnDirs(t)
}

// assertNoOwnDirs fails when this test process has control-plane
// directories. Only tests that are not parallel may call it: parallel tests
// wait until every serial test is done, so none of them has one yet.
func assertNoOwnDirs(t *testing.T) {
	t.Helper()
	own, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("%s%d-*", tempPrefix, os.Getpid())))
	if len(own) > 0 {
		t.Errorf("a failed Start left directories behind: %v", own)
	}
}

func TestPortClashIsRetried(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	calls := 0
	port := func() (int, error) {
		calls++
		if calls == 1 { // etcd's client port on the first attempt
			return taken.Addr().(*net.TCPAddr).Port, nil
		}
		return freePort()
	}
	cp, err := start(t.Context(), quietOptions(t), port)
	if err != nil {
		t.Fatalf("Start did not recover from a taken port: %v", err)
	}
	defer cp.Stop()
	if calls < 6 || calls%3 != 0 {
		t.Errorf("port chooser called %d times, want whole attempts of three ports and at least two", calls)
	}
	if _, err := clientset(t, cp).CoreV1().Namespaces().Get(t.Context(), "default", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestChildrenDieWithParent runs a control plane in a child test process,
// kills that process with SIGKILL (no cleanup runs), and checks that etcd and
// kube-apiserver die with it and that the next Start removes its directory.
func TestChildrenDieWithParent(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperControlPlane$", "-test.v")
	cmd.Env = append(os.Environ(), "LARIAT_CONTROLPLANE_HELPER=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var etcdPID, apiserverPID int
	var dir string
	scanner := bufio.NewScanner(stdout)
	for scanner.Scan() {
		if n, _ := fmt.Sscanf(scanner.Text(), "READY %d %d %s", &etcdPID, &apiserverPID, &dir); n == 3 {
			break
		}
	}
	if dir == "" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("helper did not report a running control plane")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	err = wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return !processAlive(etcdPID) && !processAlive(apiserverPID), nil
	})
	if err != nil {
		t.Fatalf("etcd (%d, alive %v) or kube-apiserver (%d, alive %v) outlived their killed parent",
			etcdPID, processAlive(etcdPID), apiserverPID, processAlive(apiserverPID))
	}
	// Another package's control plane may have cleaned up already; either
	// way the directory must be gone after a cleanup pass.
	removeStaleDirs(filepath.Dir(dir))
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("stale directory %s was not removed: %v", dir, err)
	}
}

func TestRemoveStaleDirsKeepsLiveOwners(t *testing.T) {
	root := t.TempDir()
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{ // name -> should survive
		fmt.Sprintf("%s%d-dead", tempPrefix, exited.Process.Pid): false,
		fmt.Sprintf("%s%d-mine", tempPrefix, os.Getpid()):        true,
		fmt.Sprintf("%s%d-parent", tempPrefix, os.Getppid()):     true,
		"unrelated-123-dir": true,
	}
	for name := range dirs {
		if err := os.Mkdir(filepath.Join(root, name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleDirs(root)
	for name, survive := range dirs {
		_, err := os.Stat(filepath.Join(root, name))
		if exists := err == nil; exists != survive {
			t.Errorf("%s: exists=%v, want %v", name, exists, survive)
		}
	}
}

// TestHelperControlPlane is the child process of TestChildrenDieWithParent.
func TestHelperControlPlane(t *testing.T) {
	if os.Getenv("LARIAT_CONTROLPLANE_HELPER") != "1" {
		t.Skip("only runs as TestChildrenDieWithParent's child process")
	}
	cp, err := Start(t.Context(), Options{Logger: logrus.New()})
	if err != nil {
		t.Fatal(err)
	}
	etcdPID, apiserverPID := cp.PIDs()
	fmt.Printf("READY %d %d %s\n", etcdPID, apiserverPID, cp.Dir())
	time.Sleep(time.Hour) // until killed
}
