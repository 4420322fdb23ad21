package cache_test

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/lariat-dev/lariat/pkg/cache"
)

// adv5ConvertDial converts a Dial to version: spec.size (v1beta1) and
// spec.count (v1) are one field renamed, and the label seen-as names the
// version it was converted to (a webhook may change labels).
func adv5ConvertDial(raw []byte, apiVersion string) (runtime.RawExtension, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return runtime.RawExtension{}, err
	}
	from := adv5Field(u.GroupVersionKind().Version)
	u.SetAPIVersion(apiVersion)
	to := adv5Field(u.GroupVersionKind().Version)
	if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", from); ok && from != to {
		unstructured.RemoveNestedField(u.Object, "spec", from)
		if err := unstructured.SetNestedField(u.Object, v, "spec", to); err != nil {
			return runtime.RawExtension{}, err
		}
	}
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["seen-as"] = u.GroupVersionKind().Version
	u.SetLabels(labels)
	out, err := u.MarshalJSON()
	return runtime.RawExtension{Raw: out}, err
}

// adv5ConversionWebhook serves Dial conversions over TLS and returns the
// CRD's conversion (a YAML flow mapping) that calls it.
func adv5ConversionWebhook(t *testing.T) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review apiextensionsv1.ConversionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, fmt.Sprint("bad review: ", err), http.StatusBadRequest)
			return
		}
		resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
		for _, o := range review.Request.Objects {
			converted, err := adv5ConvertDial(o.Raw, review.Request.DesiredAPIVersion)
			if err != nil {
				resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
				resp.ConvertedObjects = nil
				break
			}
			resp.ConvertedObjects = append(resp.ConvertedObjects, converted)
		}
		review.Request, review.Response = nil, resp
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	}))
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return fmt.Sprintf(`{strategy: Webhook, webhook: {conversionReviewVersions: [v1], clientConfig: {url: "%s/convert", caBundle: %s}}}`,
		srv.URL, base64.StdEncoding.EncodeToString(ca))
}

// TestAdv5CompactCacheOfACRDConvertedByAWebhook: the story of
// TestAdv5CompactCacheOfACRDServedInTwoVersions with a conversion webhook
// that renames a spec field between the versions and labels each object
// with the version it was converted to. Every compact cache holds field
// for field what the default cache of its version holds (the webhook's
// field and labels included), and its metadata list (the labels kept beside
// each encoded object, which selectors read) is the default cache's.
func TestAdv5CompactCacheOfACRDConvertedByAWebhook(t *testing.T) {
	group := adv5TwoVersionKind(t, adv5ConversionWebhook(t))
	converted := 0
	adv5TwoVersions(t, group, func(p adv5Pair, ns string) {
		for _, name := range []string{"d-0", "d-2"} {
			o := p.in.sameAsPlain(t, ns+"/"+name)
			var spec map[string]any
			var labels map[string]string
			switch o := o.(type) {
			case *unstructured.Unstructured:
				spec, _, _ = unstructured.NestedMap(o.Object, "spec")
				labels = o.GetLabels()
			case *adv3Widget:
				spec, labels = o.Spec, o.Labels
			}
			if _, ok := spec[adv5Field(p.gvk.Version)]; !ok {
				t.Errorf("%s: %s has spec %v, want its %s", p.name, name, spec, adv5Field(p.gvk.Version))
			}
			if labels["seen-as"] == p.gvk.Version {
				converted++
			}
		}
		metas := func(inf toolscache.SharedIndexInformer) []string {
			list, err := cache.ListMetadata(inf.GetStore())
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, m := range list {
				out = append(out, fmt.Sprintf("%s/%s %s %v", m.GetNamespace(), m.GetName(), m.GetResourceVersion(), m.GetLabels()))
			}
			slices.Sort(out)
			return out
		}
		if got, want := metas(p.in.compact), metas(p.in.plain); !slices.Equal(got, want) {
			t.Errorf("%s: the compact cache's metadata %v, the default cache's %v", p.name, got, want)
		}
	})
	if converted == 0 {
		t.Fatal("no object was converted by the webhook: the test did not provoke what it is about")
	}
	t.Logf("%d objects read in a version the webhook converted them to", converted)
}
