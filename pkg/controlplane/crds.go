package controlplane

import (
	"context"
	"fmt"
	"os"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"

	"github.com/lariat-dev/lariat/pkg/crd"
)

// crdFieldManager owns the fields InstallCRDs applies.
const crdFieldManager = "lariat-controlplane"

// InstallCRDs creates (or updates) every CustomResourceDefinition found in the
// *.yaml, *.yml and *.json files of dirs and waits until each is Established
// and its resource is listed by discovery, so clients that map kinds through
// discovery find it at once. A file that holds something other than a CRD is
// an error naming the directory, file and document. It is crd.Install over
// the manifests of directories on disk.
func InstallCRDs(ctx context.Context, cfg *rest.Config, dirs ...string) error {
	crds, err := readCRDs(dirs)
	if err != nil {
		return err
	}
	if err := (crd.Installer{FieldManager: crdFieldManager}).Install(ctx, cfg, crds...); err != nil {
		return fmt.Errorf("controlplane: %w", err)
	}
	return nil
}

// readCRDs decodes every document of every manifest file in dirs, in file
// name order.
func readCRDs(dirs []string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, dir := range dirs {
		dirCRDs, err := crd.FromFS(os.DirFS(dir), ".")
		if err != nil {
			return nil, fmt.Errorf("controlplane: CRDs in %s: %w", dir, err)
		}
		crds = append(crds, dirCRDs...)
	}
	return crds, nil
}
