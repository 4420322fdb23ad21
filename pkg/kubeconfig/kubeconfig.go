// Package kubeconfig finds the cluster an operator runs against, the way
// wrangler's kubeconfig.GetNonInteractiveClientConfig and kubectl do, with
// client-go's clientcmd: the path given (a --kubeconfig flag), else the
// files in $KUBECONFIG, else ~/.kube/config, else the pod's in-cluster
// configuration (service account token and KUBERNETES_SERVICE_HOST).
// Nothing prompts for credentials.
package kubeconfig

import (
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ClientConfig returns the client configuration for path (empty: the
// default rules above) and kubeContext (empty: the file's current
// context). It reads nothing yet; its Namespace method gives the
// namespace the configuration names, or the pod's own in a cluster.
func ClientConfig(path, kubeContext string) clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
}

// Load returns the REST configuration for path (empty: the default rules
// in the package documentation) and the kubeconfig's current context. The
// error says where it looked when it found nothing.
func Load(path string) (*rest.Config, error) {
	cfg, err := ClientConfig(path, "").ClientConfig()
	if clientcmd.IsEmptyConfig(err) || errors.Is(err, clientcmd.ErrEmptyConfig) {
		return nil, fmt.Errorf("no cluster configured: pass a kubeconfig path (--kubeconfig), set %s, create %s, or run in a pod: %w",
			clientcmd.RecommendedConfigPathEnvVar, clientcmd.RecommendedHomeFile, err)
	}
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, nil
}
