package lasso_test

import (
	"fmt"
	"sort"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"

	widgetv1 "github.com/lariat-dev/lariat/compat/lasso/testdata/wrangler/apis/widgets.lasso.lariat.dev/v1"
)

// TestSideBySideCacheReads: what a handler reads from wrangler's cache:
// Get of an object and of a missing one (NotFound, with the message), of
// another namespace than the factory's, List with a selector, GetByIndex
// of an indexer added before Start, and the caches of other kinds.
func TestSideBySideCacheReads(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{}, func(t *testing.T, s *side) {
		cms := s.cms()
		cms.Cache().AddIndexer("byV", func(cm *corev1.ConfigMap) ([]string, error) {
			return []string{cm.Data["v"]}, nil
		})
		// A kind used only through its cache, asked for before Start, is
		// listed before any handler runs; one first asked for inside a
		// handler after Start has an informer nobody started, whose
		// cache wrangler reads as empty on both cores.
		secrets := s.core.Core().V1().Secret().Cache()
		cms.OnChange(s.handlers, "reader", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			if cm == nil || cm.Name != "reader" {
				return cm, nil
			}
			sec, err := secrets.Get(s.ns, "s")
			s.rec.add("reader", "secret", fmt.Sprintf("found=%t", err == nil && sec.Name == "s")+errText(err))
			sa, err := s.core.Core().V1().ServiceAccount().Cache().Get(s.ns, "default")
			s.rec.add("reader", "service account first asked for in a handler", fmt.Sprintf("found=%t", err == nil && sa.Name == "default")+errText(err))
			c := cms.Cache()
			got, err := c.Get(s.ns, "a")
			s.rec.add("reader", "get a", describeCM(got)+errText(err))
			got, err = c.Get(s.ns, "missing")
			s.rec.add("reader", "get missing", describeCM(nilIfEmpty(got))+errText(err))
			got, err = c.Get("elsewhere", "a")
			s.rec.add("reader", "get elsewhere", describeCM(nilIfEmpty(got))+errText(err))
			list, err := c.List(s.ns, labels.SelectorFromSet(labels.Set{"app": "x"}))
			s.rec.add("reader", "list app=x", names(list)+errText(err))
			list, err = c.List("", labels.Everything())
			s.rec.add("reader", "list all namespaces", names(list)+errText(err))
			list, err = c.GetByIndex("byV", "1")
			s.rec.add("reader", "index v=1", names(list)+errText(err))
			// lasso's informers come with client-go's namespace index,
			// which wrangler code reads by name.
			list, err = c.GetByIndex(toolscache.NamespaceIndex, s.ns)
			s.rec.add("reader", "index namespace", names(list)+errText(err))
			return cm, nil
		})
		for _, cm := range []struct{ name, v, app string }{{"a", "1", "x"}, {"b", "1", ""}, {"c", "2", "x"}} {
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.name}, Data: map[string]string{"v": cm.v}}
			if cm.app != "" {
				obj.Labels = map[string]string{"app": cm.app}
			}
			if _, err := s.kube.CoreV1().ConfigMaps(s.ns).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.kube.CoreV1().Secrets(s.ns).Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.kube.CoreV1().ServiceAccounts(s.ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		s.createCM(t, "reader", "0")
		s.start(t)
		s.waitCount(t, "reader", 9)
	})
	assertSame(t, lassoRec.all(), lariatRec.all())
}

// errText is an error as a handler would test it: its API status reason
// and message.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprintf(" error reason=%s message=%q", apierrors.ReasonForError(err), err.Error())
}

// nilIfEmpty turns the zero value wrangler's cache may return with an
// error into nil, so both are described alike if both cores return either.
func nilIfEmpty(cm *corev1.ConfigMap) *corev1.ConfigMap {
	if cm != nil && cm.Name == "" && cm.UID == "" {
		return nil
	}
	return cm
}

// names returns the sorted names of what a cache returned.
func names(list []*corev1.ConfigMap) string {
	var out []string
	for _, cm := range list {
		if cm.Name != "kube-root-ca.crt" {
			out = append(out, cm.Name)
		}
	}
	sort.Strings(out)
	return fmt.Sprint(out)
}

// describeWidget is a handler's observation of a Widget.
func describeWidget(w *widgetv1.Widget) string {
	if w == nil {
		return "nil"
	}
	return fmt.Sprintf("name=%q size=%d observed=%d ann=%v", w.Name, w.Spec.Size, w.Status.ObservedSize, w.Annotations["seen-update"])
}

// TestSideBySideUpdateAndUpdateStatusReturns: a handler that writes through
// wrangler's generated client (UpdateStatus, Update) and returns the result
// passes the stored object, with its new resourceVersion, to the handlers
// after it; the write's own event brings a pass over the same state.
func TestSideBySideUpdateAndUpdateStatusReturns(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{widgets: true}, func(t *testing.T, s *side) {
		w := s.widgets.Widgets().V1().Widget()
		var written sync.Map // name: the resourceVersion a handler's write left
		w.OnChange(s.handlers, "status", func(key string, obj *widgetv1.Widget) (*widgetv1.Widget, error) {
			if obj == nil || obj.Name != "st" || obj.Status.ObservedSize == obj.Spec.Size {
				return obj, nil
			}
			obj = obj.DeepCopy()
			obj.Status.ObservedSize = obj.Spec.Size
			out, err := w.UpdateStatus(obj)
			if err == nil {
				written.Store(obj.Name, out.ResourceVersion)
			}
			return out, err
		})
		w.OnChange(s.handlers, "update", func(key string, obj *widgetv1.Widget) (*widgetv1.Widget, error) {
			if obj == nil || obj.Name != "up" || obj.Annotations["seen-update"] != "" {
				return obj, nil
			}
			obj = obj.DeepCopy()
			obj.Annotations = map[string]string{"seen-update": "yes"}
			out, err := w.Update(obj)
			if err == nil {
				written.Store(obj.Name, out.ResourceVersion)
			}
			return out, err
		})
		w.OnChange(s.handlers, "after", func(key string, obj *widgetv1.Widget) (*widgetv1.Widget, error) {
			what := describeWidget(obj)
			if obj != nil {
				if rv, ok := written.Load(obj.Name); ok && obj.ResourceVersion == rv {
					what += " (as written)"
				}
			}
			s.rec.add("after", key, what)
			return obj, nil
		})
		s.start(t)
		for _, name := range []string{"st", "up"} {
			if _, err := w.Create(&widgetv1.Widget{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns},
				Spec:       widgetv1.WidgetSpec{Size: 3},
			}); err != nil {
				t.Fatal(err)
			}
		}
		s.waitSeen(t, "after", s.key("st"), `name="st" size=3 observed=3 ann= (as written)`)
		s.waitSeen(t, "after", s.key("up"), `name="up" size=3 observed=0 ann=yes (as written)`)
	})
	assertSame(t, perKeyCollapsed(lassoRec.get("after")), perKeyCollapsed(lariatRec.get("after")))
}

// perKeyCollapsed splits observations by key and drops consecutive repeats.
func perKeyCollapsed(seen []string) map[string][]string {
	out := perKey(seen)
	for k, v := range out {
		out[k] = compact(v)
	}
	return out
}

func compact(seen []string) []string {
	var out []string
	for _, s := range seen {
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}
