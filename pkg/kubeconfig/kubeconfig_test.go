package kubeconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig whose contexts "a" and "b" point at
// hostA and hostB, with "a" current and namespace "ns-b" in "b".
func writeKubeconfig(t *testing.T, name, hostA, hostB string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["a"] = &clientcmdapi.Cluster{Server: hostA}
	cfg.Clusters["b"] = &clientcmdapi.Cluster{Server: hostB}
	cfg.AuthInfos["user"] = &clientcmdapi.AuthInfo{Token: "token"}
	cfg.Contexts["a"] = &clientcmdapi.Context{Cluster: "a", AuthInfo: "user"}
	cfg.Contexts["b"] = &clientcmdapi.Context{Cluster: "b", AuthInfo: "user", Namespace: "ns-b"}
	cfg.CurrentContext = "a"
	path := filepath.Join(t.TempDir(), name)
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// isolate points $KUBECONFIG at nothing, and makes in-cluster
// configuration impossible, so only what a test sets is found.
func isolate(t *testing.T) {
	t.Setenv(clientcmd.RecommendedConfigPathEnvVar, "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
}

func TestExplicitPathWinsOverKUBECONFIG(t *testing.T) {
	isolate(t)
	t.Setenv(clientcmd.RecommendedConfigPathEnvVar, writeKubeconfig(t, "env", "https://env.example:6443", "https://env-b.example:6443"))
	path := writeKubeconfig(t, "flag", "https://flag.example:6443", "https://flag-b.example:6443")
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://flag.example:6443" {
		t.Errorf("host %q, want the explicit file's", cfg.Host)
	}
}

// TestKUBECONFIG: without a path, $KUBECONFIG is read. (~/.kube/config
// comes next; clientcmd fixes its path when the process starts, so it is
// not switched here.)
func TestKUBECONFIG(t *testing.T) {
	isolate(t)
	t.Setenv(clientcmd.RecommendedConfigPathEnvVar, writeKubeconfig(t, "env", "https://env.example:6443", "https://env-b.example:6443"))
	cfg, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://env.example:6443" {
		t.Errorf("host %q, want $KUBECONFIG's", cfg.Host)
	}
}

func TestContextAndNamespace(t *testing.T) {
	isolate(t)
	path := writeKubeconfig(t, "flag", "https://a.example:6443", "https://b.example:6443")
	cc := ClientConfig(path, "b")
	cfg, err := cc.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://b.example:6443" || ns != "ns-b" {
		t.Errorf("host %q namespace %q, want context b's", cfg.Host, ns)
	}
}

func TestNothingConfiguredSaysWhereItLooked(t *testing.T) {
	isolate(t)
	if _, err := os.Stat(clientcmd.RecommendedHomeFile); err == nil {
		t.Skipf("%s exists", clientcmd.RecommendedHomeFile)
	}
	_, err := Load("")
	if err == nil {
		t.Fatal("no error without any configuration")
	}
	for _, want := range []string{"--kubeconfig", "KUBECONFIG", ".kube/config", "pod"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestMissingExplicitFileIsAnError(t *testing.T) {
	isolate(t)
	_, err := Load(filepath.Join(t.TempDir(), "missing"))
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("error %v, want one naming the missing file", err)
	}
}
