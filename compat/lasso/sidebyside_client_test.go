package lasso_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestSideBySideClientCalls: what a handler gets back from wrangler's
// generated client, built on lasso's client (over Lariat's REST clients
// through compat/lasso): Create, Get, List (with the items' and the list's
// apiVersion and kind), Patch, Delete and DeleteCollection, and the errors
// of a missing object and a create that exists.
func TestSideBySideClientCalls(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{}, func(t *testing.T, s *side) {
		cms := s.cms()
		cms.OnChange(s.handlers, "driver", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			if cm == nil || cm.Name != "driver" {
				return cm, nil
			}
			add := func(call, what string, err error) { s.rec.add("driver", call, what+errText(err)) }
			made := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "made", Namespace: s.ns, Labels: map[string]string{"made": "yes"}},
				Data:       map[string]string{"v": "1"},
			}
			out, err := cms.Create(made)
			add("create", typeMeta("", out), err)
			_, err = cms.Create(made)
			add("create again", "", err)
			out, err = cms.Get(s.ns, "made", metav1.GetOptions{})
			add("get", typeMeta("", out), err)
			list, err := cms.List(s.ns, metav1.ListOptions{LabelSelector: "made=yes"})
			if err == nil {
				what := fmt.Sprintf("list apiVersion=%s kind=%s continue=%q:", list.APIVersion, list.Kind, list.Continue)
				for i := range list.Items {
					what += " " + typeMeta("", &list.Items[i])
				}
				add("list", what, nil)
			} else {
				add("list", "", err)
			}
			out, err = cms.Patch(s.ns, "made", types.MergePatchType, []byte(`{"data":{"v":"2"}}`))
			add("patch", typeMeta("", out), err)
			add("delete", "", cms.Delete(s.ns, "made", nil))
			_, err = cms.Get(s.ns, "made", metav1.GetOptions{})
			add("get deleted", fmt.Sprintf("notFound=%t", apierrors.IsNotFound(err)), nil)
			add("delete deleted", "", cms.Delete(s.ns, "made", nil))
			_, err = cms.Create(made.DeepCopy())
			add("create for collection", "", err)
			add("delete collection", "", cms.DeleteCollection(s.ns, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "made=yes"}))
			list, err = cms.List(s.ns, metav1.ListOptions{LabelSelector: "made=yes"})
			add("list after", fmt.Sprintf("items=%d", len(list.Items)), err)
			return cm, nil
		})
		s.createCM(t, "driver", "0")
		s.start(t)
		s.waitCount(t, "driver", 11)
	})
	assertSame(t, lassoRec.all(), lariatRec.all())
}
