// Package crd installs an operator's CustomResourceDefinitions at start-up:
// it creates or updates each (server-side apply, so fields other writers
// own, such as a conversion webhook's CA bundle injected by cert-manager,
// stay), then waits until each is Established and its served versions are
// in discovery, so the clients and caches the operator creates next find
// the kinds. This is wrangler's crd package (crd.Create, BatchCreateCRDs
// and their wait for Established).
//
// The CRDs come from the manifests the code generator writes (its -crd-dir,
// typically embedded with go:embed and read with FromFS, with schemas from
// the Go types' markers), or, for kinds without a generated schema, from a
// CRD value built with Type.
package crd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// DefaultFieldManager owns the fields Install applies when the Installer
// names no field manager.
const DefaultFieldManager = "lariat-crd"

// DefaultTimeout bounds the wait for each CRD when the Installer sets none.
const DefaultTimeout = time.Minute

// Installer installs CRDs. Its zero value uses DefaultFieldManager and
// DefaultTimeout.
type Installer struct {
	// FieldManager owns the applied fields of the CRDs.
	FieldManager string
	// Timeout bounds the wait for each CRD to be Established and served.
	Timeout time.Duration
}

// Install creates or updates crds and waits until each is Established and
// served, with the zero Installer.
func Install(ctx context.Context, cfg *rest.Config, crds ...*apiextensionsv1.CustomResourceDefinition) error {
	return Installer{}.Install(ctx, cfg, crds...)
}

// Install applies every CRD first (so the API server establishes them
// together), then waits for each. A CRD that is not Established and served
// within the timeout fails with an error naming it and the conditions that
// are not True (a NamesAccepted False for a name in use, say).
func (in Installer) Install(ctx context.Context, cfg *rest.Config, crds ...*apiextensionsv1.CustomResourceDefinition) error {
	if in.FieldManager == "" {
		in.FieldManager = DefaultFieldManager
	}
	if in.Timeout <= 0 {
		in.Timeout = DefaultTimeout
	}
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("crd: client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("crd: discovery client: %w", err)
	}
	client := cs.ApiextensionsV1().CustomResourceDefinitions()
	var errs []error
	for _, c := range crds {
		body, err := applyBody(c)
		if err != nil {
			errs = append(errs, fmt.Errorf("crd: %s: %w", c.Name, err))
			continue
		}
		force := true
		if _, err := client.Patch(ctx, c.Name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: in.FieldManager, Force: &force}); err != nil {
			errs = append(errs, fmt.Errorf("crd: apply %s: %w", c.Name, err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, c := range crds {
		if err := in.wait(ctx, client, disco, c.Name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// applyBody is the CRD as an apply patch: its kind set, and nothing the
// server owns (status, resourceVersion, managed fields).
func applyBody(c *apiextensionsv1.CustomResourceDefinition) ([]byte, error) {
	if c.Name == "" {
		return nil, errors.New("a CRD has no name")
	}
	c = c.DeepCopy()
	c.APIVersion, c.Kind = apiextensionsv1.SchemeGroupVersion.String(), "CustomResourceDefinition"
	c.ResourceVersion, c.UID, c.ManagedFields, c.CreationTimestamp = "", "", nil, metav1.Time{}
	c.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
	m := map[string]any{}
	data, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	// The typed zero values would be claimed by the apply.
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	return json.Marshal(m)
}

type crdGetter interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*apiextensionsv1.CustomResourceDefinition, error)
}

// wait polls until the CRD is Established and every served version lists
// its resource in discovery.
func (in Installer) wait(ctx context.Context, client crdGetter, disco discovery.DiscoveryInterface, name string) error {
	// last is what was seen of the CRD; a failed read (the last one
	// fails when the timeout cuts it short) only says something when
	// nothing was seen.
	var last, readErr string
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, in.Timeout, true, func(ctx context.Context) (bool, error) {
		current, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			readErr = err.Error()
			return false, nil
		}
		if !isTrue(current, apiextensionsv1.Established) {
			last = notTrue(current)
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
			if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == current.Spec.Names.Plural }) {
				last = fmt.Sprintf("%s not yet in discovery of %s", current.Spec.Names.Plural, gv)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		if last == "" {
			last = readErr
		}
		return fmt.Errorf("crd: CustomResourceDefinition %s not established and served: %s: %w", name, last, err)
	}
	return nil
}

func isTrue(c *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == t {
			return cond.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// notTrue describes the conditions that are not True, or says there are
// none yet.
func notTrue(c *apiextensionsv1.CustomResourceDefinition) string {
	var parts []string
	for _, cond := range c.Status.Conditions {
		if cond.Status != apiextensionsv1.ConditionTrue {
			parts = append(parts, fmt.Sprintf("condition %s=%s (%s: %s)", cond.Type, cond.Status, cond.Reason, cond.Message))
		}
	}
	if len(parts) == 0 {
		return "condition Established not reported yet"
	}
	return strings.Join(parts, "; ")
}
