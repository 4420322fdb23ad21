package lasso_test

import (
	"strconv"
	"testing"

	"github.com/rancher/wrangler/v3/pkg/relatedresource"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestSideBySideRelatedResource: wrangler's relatedresource.Watch, which
// runs on a watched kind's handler chain and informer: its resolver sees a
// related Secret added, changed and deleted (nil in the deletion's pass,
// then the deleted object from the informer's delete event a second
// later), and the ConfigMaps it names are enqueued.
func TestSideBySideRelatedResource(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{}, func(t *testing.T, s *side) {
		cms, secrets := s.cms(), s.core.Core().V1().Secret()
		cms.OnChange(s.handlers, "cm", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			// Counted, not compared: lasso's rate-limited Enqueue merges
			// some of the resolver's enqueues (see
			// TestSideBySideEnqueueAfterThenEnqueue).
			s.rec.add("cm-passes", key, "pass")
			return cm, nil
		})
		relatedresource.Watch(s.handlers, "related", func(namespace, name string, obj runtime.Object) ([]relatedresource.Key, error) {
			what := "nil"
			if sec, ok := obj.(*corev1.Secret); ok && sec != nil {
				what = "secret v=" + string(sec.Data["v"]) + " deleting=" + strconv.FormatBool(sec.DeletionTimestamp != nil)
			}
			s.rec.add("resolver", namespace+"/"+name, what)
			return []relatedresource.Key{relatedresource.NewKey(namespace, "x")}, nil
		}, cms, secrets)
		s.createCM(t, "x", "1")
		s.start(t)
		s.waitCount(t, "cm-passes", 1)
		passes := func() int { return s.rec.count("cm-passes") }
		n := passes()
		sec, err := s.kube.CoreV1().Secrets(s.ns).Create(t.Context(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"v": []byte("1")},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.waitSeen(t, "resolver", s.key("s"), "secret v=1 deleting=false")
		s.waitCount(t, "cm-passes", n+1)
		sec.Data["v"] = []byte("2")
		if _, err := s.kube.CoreV1().Secrets(s.ns).Update(t.Context(), sec, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		s.waitSeen(t, "resolver", s.key("s"), "secret v=2 deleting=false")
		if err := s.kube.CoreV1().Secrets(s.ns).Delete(t.Context(), "s", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		s.waitSeen(t, "resolver", s.key("s"), "nil")
		eventually(t, "the resolver given the deleted Secret", func() bool {
			seen := s.rec.get("resolver")
			return len(seen) > 0 && seen[len(seen)-1] == "NS/s: secret v=2 deleting=false"
		})
	})
	resolved := func(r *recording) map[string][]string {
		return perKey(r.get("resolver"))
	}
	assertSame(t, resolved(lassoRec), resolved(lariatRec))
}
