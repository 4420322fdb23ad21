package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// InstallCRDs creates (or updates) every CustomResourceDefinition found in the
// *.yaml, *.yml and *.json files of dirs and waits until each is Established
// and its resource is listed by discovery, so clients that map kinds through
// discovery find it at once. A file that holds something other than a CRD is
// an error naming the file.
func InstallCRDs(ctx context.Context, cfg *rest.Config, dirs ...string) error {
	crds, err := readCRDs(dirs)
	if err != nil {
		return err
	}
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("controlplane: CRD client: %w", err)
	}
	crdClient := client.ApiextensionsV1().CustomResourceDefinitions()
	for _, crd := range crds {
		if err := createOrUpdate(ctx, crdClient, crd); err != nil {
			return err
		}
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("controlplane: discovery client: %w", err)
	}
	for _, crd := range crds {
		if err := waitServed(ctx, crdClient, disco, crd); err != nil {
			return err
		}
	}
	return nil
}

type crdInterface interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*apiextensionsv1.CustomResourceDefinition, error)
	Create(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, opts metav1.CreateOptions) (*apiextensionsv1.CustomResourceDefinition, error)
	Update(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, opts metav1.UpdateOptions) (*apiextensionsv1.CustomResourceDefinition, error)
}

func createOrUpdate(ctx context.Context, client crdInterface, crd *apiextensionsv1.CustomResourceDefinition) error {
	_, err := client.Create(ctx, crd, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("controlplane: create CRD %s: %w", crd.Name, err)
		}
		return nil
	}
	existing, err := client.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("controlplane: get CRD %s: %w", crd.Name, err)
	}
	crd.ResourceVersion = existing.ResourceVersion
	if _, err := client.Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("controlplane: update CRD %s: %w", crd.Name, err)
	}
	return nil
}

// waitServed waits until the CRD is Established and every served version
// appears in discovery.
func waitServed(ctx context.Context, client crdInterface, disco discovery.DiscoveryInterface, crd *apiextensionsv1.CustomResourceDefinition) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		current, err := client.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		if !established(current) {
			last = "not Established yet"
			return false, nil
		}
		for _, v := range current.Spec.Versions {
			if !v.Served {
				continue
			}
			gv := current.Spec.Group + "/" + v.Name
			list, err := disco.ServerResourcesForGroupVersion(gv)
			if err != nil {
				last = fmt.Sprintf("discovery of %s: %v", gv, err)
				return false, nil
			}
			if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool {
				return r.Name == current.Spec.Names.Plural
			}) {
				last = fmt.Sprintf("%s not yet in discovery of %s", current.Spec.Names.Plural, gv)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("controlplane: CRD %s not served: %s: %w", crd.Name, last, err)
	}
	return nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// readCRDs decodes every document of every manifest file in dirs, in file
// name order.
func readCRDs(dirs []string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("controlplane: read CRD directory: %w", err)
		}
		for _, e := range entries {
			switch strings.ToLower(filepath.Ext(e.Name())) {
			case ".yaml", ".yml", ".json":
			default:
				continue
			}
			if e.IsDir() {
				continue
			}
			path := filepath.Join(dir, e.Name())
			fileCRDs, err := readCRDFile(path)
			if err != nil {
				return nil, err
			}
			crds = append(crds, fileCRDs...)
		}
	}
	return crds, nil
}

func readCRDFile(path string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("controlplane: %w", err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	decoder := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for doc := 1; ; doc++ {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := decoder.Decode(crd); err != nil {
			if errors.Is(err, io.EOF) {
				return crds, nil
			}
			return nil, fmt.Errorf("controlplane: %s, document %d: %w", path, doc, err)
		}
		if crd.Kind == "" && crd.Name == "" {
			continue // an empty document between separators
		}
		if crd.Kind != "CustomResourceDefinition" || crd.APIVersion != apiextensionsv1.SchemeGroupVersion.String() {
			return nil, fmt.Errorf("controlplane: %s, document %d: want apiextensions.k8s.io/v1 CustomResourceDefinition, got %s %s",
				path, doc, crd.APIVersion, crd.Kind)
		}
		crds = append(crds, crd)
	}
}
