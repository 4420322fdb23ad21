package kubeconfig_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/lariat-dev/lariat/pkg/kubeconfig"
)

// An operator's main takes --kubeconfig and falls back to $KUBECONFIG,
// ~/.kube/config and the in-cluster configuration.
func ExampleLoad() {
	// (The example writes a kubeconfig; an operator has one.)
	dir, err := os.MkdirTemp("", "kubeconfig-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["dev"] = &clientcmdapi.Cluster{Server: "https://dev.example:6443"}
	cfg.Contexts["dev"] = &clientcmdapi.Context{Cluster: "dev"}
	cfg.CurrentContext = "dev"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		fmt.Println(err)
		return
	}

	flags := flag.NewFlagSet("operator", flag.ContinueOnError)
	kubeconfigPath := flags.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	_ = flags.Parse([]string{"--kubeconfig", path})

	restConfig, err := kubeconfig.Load(*kubeconfigPath)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(restConfig.Host)
	// Output: https://dev.example:6443
}
