package crd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// Read decodes the CRDs of a YAML or JSON stream of documents, as the code
// generator writes them. A document that is not an apiextensions.k8s.io/v1
// CustomResourceDefinition is an error, so a wrong file is not installed
// half.
func Read(r io.Reader) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	decoder := yaml.NewYAMLOrJSONDecoder(r, 4096)
	for doc := 1; ; doc++ {
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := decoder.Decode(c); err != nil {
			if errors.Is(err, io.EOF) {
				return crds, nil
			}
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		if c.Kind == "" && c.Name == "" {
			continue // an empty document between separators
		}
		if c.Kind != "CustomResourceDefinition" || c.APIVersion != apiextensionsv1.SchemeGroupVersion.String() {
			return nil, fmt.Errorf("document %d: want apiextensions.k8s.io/v1 CustomResourceDefinition, got %s %s", doc, c.APIVersion, c.Kind)
		}
		crds = append(crds, c)
	}
}

// FromFS reads the CRDs of the *.yaml, *.yml and *.json files in the
// directory dir of fsys (an embed.FS of the generator's CRD directory,
// say), in file name order.
func FromFS(fsys fs.FS, dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("crd: %w", err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, e := range entries {
		switch strings.ToLower(path.Ext(e.Name())) {
		case ".yaml", ".yml", ".json":
		default:
			continue
		}
		if e.IsDir() {
			continue
		}
		name := path.Join(dir, e.Name())
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("crd: %w", err)
		}
		fileCRDs, err := Read(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("crd: %s: %w", name, err)
		}
		crds = append(crds, fileCRDs...)
	}
	return crds, nil
}
