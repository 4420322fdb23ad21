package lasso_test

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// TestSideBySideKindRegisteredAfterStart: a handler of a kind no handler
// asked for before Start runs once the factory is started again (lasso's
// controllers are started by the factory's Start, each time for those not
// running), and sees the objects that exist; the kinds already running
// are not handled again. Two handlers of one name are two handlers.
func TestSideBySideKindRegisteredAfterStart(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{}, func(t *testing.T, s *side) {
		s.cms().OnChange(s.handlers, "cm", record(s, "cm"))
		s.createCM(t, "c", "1")
		s.start(t)
		s.waitCount(t, "cm", 1)
		secrets := s.core.Core().V1().Secret()
		for _, observer := range []string{"dup", "dup"} {
			secrets.OnChange(s.handlers, "dup", func(key string, sec *corev1.Secret) (*corev1.Secret, error) {
				what := "nil"
				if sec != nil {
					what = "name=" + sec.Name + " data=" + string(sec.Data["v"])
				}
				s.rec.add(observer, key, what)
				return sec, nil
			})
		}
		if _, err := s.kube.CoreV1().Secrets(s.ns).Create(t.Context(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"v": []byte("1")},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		s.start(t) // wrangler's Start again, for the kind asked for since
		s.waitCount(t, "dup", 2)
		// The running kind's handlers are not given its objects again.
		s.setCM(t, "c", "2")
		s.waitSeen(t, "cm", s.key("c"), describeCM(cmNamed("c", "2")))
	})
	assertSame(t, lassoRec.all(), lariatRec.all())
	if got := lariatRec.get("dup"); len(got) != 2 {
		t.Fatalf("the two handlers named dup observed %q, want the Secret once each", got)
	}
}

// TestSideBySideClusterScopedKind: a cluster-scoped kind's keys are names,
// and a factory limited to one namespace still lists it (the namespace
// applies to namespaced kinds only); Enqueue of a name with no object
// gives nil.
func TestSideBySideClusterScopedKind(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{}, func(t *testing.T, s *side) {
		namespaces := s.core.Core().V1().Namespace()
		namespaces.OnChange(s.handlers, "ns", func(key string, ns *corev1.Namespace) (*corev1.Namespace, error) {
			if key != s.ns && key != s.ns+"-ghost" {
				return ns, nil
			}
			what := "nil"
			if ns != nil {
				what = "name=" + ns.Name
				if _, err := namespaces.Cache().Get(ns.Name); err != nil {
					what += " cache: " + err.Error()
				}
				// lasso gives a cluster-scoped kind's informer no
				// namespace index.
				if _, err := namespaces.Cache().GetByIndex(toolscache.NamespaceIndex, ""); err != nil {
					what += " namespace index: " + err.Error()
				}
			}
			s.rec.add("ns", key, what)
			return ns, nil
		})
		s.start(t)
		s.waitCount(t, "ns", 1)
		namespaces.Enqueue(s.ns + "-ghost")
		s.waitSeen(t, "ns", s.ns+"-ghost", "nil")
	})
	// The namespace may be handled again (its own updates): collapsed.
	assertSame(t, lassoRec.collapsed(), lariatRec.collapsed())
}

// TestSideBySideRetryUntilGone: a handler that keeps failing for an object
// is retried until the object is deleted; then it is given nil.
func TestSideBySideRetryUntilGone(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{}, func(t *testing.T, s *side) {
		s.cms().OnChange(s.handlers, "failing", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			s.rec.add("failing", key, describeCM(cm))
			if cm != nil {
				return cm, errors.New("never")
			}
			return nil, nil
		})
		s.start(t)
		s.createCM(t, "a", "1")
		s.waitCount(t, "failing", 3)
		s.deleteCM(t, "a")
		s.waitSeen(t, "failing", s.key("a"), "nil")
	})
	// How many retries ran before the deletion depends on the backoff
	// and the clock: compared collapsed.
	assertSame(t, lassoRec.collapsed(), lariatRec.collapsed())
}

// TestSideBySideTypeMetaAndMetadata: what a handler sees of an object
// beyond its data: apiVersion and kind (as listed, as watched, from the
// cache, as returned by Update: set on both cores, although Lariat reads
// built-in kinds as protobuf) and managedFields.
func TestSideBySideTypeMetaAndMetadata(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{}, func(t *testing.T, s *side) {
		cms := s.cms()
		cms.OnChange(s.handlers, "meta", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			if cm == nil {
				return nil, nil
			}
			s.rec.add("meta", key, typeMeta("given", cm))
			cached, err := cms.Cache().Get(cm.Namespace, cm.Name)
			if err != nil {
				return cm, err
			}
			s.rec.add("meta", key, typeMeta("cached", cached))
			if cm.Annotations["seen-update"] != "" {
				return cm, nil
			}
			cm = cm.DeepCopy()
			cm.Annotations = map[string]string{"seen-update": "yes"}
			out, err := cms.Update(cm)
			if err == nil {
				s.rec.add("meta", key, typeMeta("updated", out))
			}
			return out, err
		})
		s.createCM(t, "listed", "1")
		s.start(t)
		s.createCM(t, "watched", "1")
		for _, name := range []string{"listed", "watched"} {
			eventually(t, name+" updated and seen again", func() bool {
				prefix := "NS/" + name + ": given " + describeCM(annotated(name))
				for _, line := range s.rec.get("meta") {
					if strings.HasPrefix(line, prefix) {
						return true
					}
				}
				return false
			})
		}
	})
	// A deliberate difference (docs/comparison.md, "cache"): Lariat's
	// cache drops managedFields, so what handlers are given and read
	// from the cache has none; an Update of that copy keeps them on the
	// server (the returned object has them, as on lasso). Apart from
	// that, the same.
	lariatSeen := lariatRec.get("meta")
	for i, line := range lariatSeen {
		if !strings.Contains(line, ": updated ") {
			if !strings.HasSuffix(line, " managedFields=false") {
				t.Fatalf("on Lariat a handler was given or read managedFields: %s", line)
			}
			lariatSeen[i] = strings.TrimSuffix(line, "false") + "true"
		}
	}
	assertSame(t, perKeyCollapsed(lassoRec.get("meta")), perKeyCollapsed(lariatSeen))
}

func annotated(name string) *corev1.ConfigMap {
	cm := cmNamed(name, "1")
	cm.Annotations = map[string]string{"seen-update": "yes"}
	return cm
}

// typeMeta describes how an object came to a handler: its apiVersion and
// kind, and whether it carries managedFields.
func typeMeta(how string, cm *corev1.ConfigMap) string {
	return how + " " + describeCM(cm) + " apiVersion=" + cm.APIVersion + " kind=" + cm.Kind +
		" managedFields=" + strconv.FormatBool(len(cm.ManagedFields) > 0)
}

// TestSideBySideStartWithNoThreadiness: wrangler's Start(ctx, 0) leaves the
// number of workers to the factory: lasso's DefaultWorkers, 5. Two keys'
// handlers then run at once: each waits until the other has begun.
func TestSideBySideStartWithNoThreadiness(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{}, func(t *testing.T, s *side) {
		began := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
		other := map[string]string{"a": "b", "b": "a"}
		var once sync.Map
		s.cms().OnChange(s.handlers, "h", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			if cm == nil || began[cm.Name] == nil {
				return cm, nil
			}
			if _, done := once.LoadOrStore(cm.Name, true); done {
				return cm, nil
			}
			close(began[cm.Name])
			select {
			case <-began[other[cm.Name]]:
				s.rec.add("h", key, "ran while the other key's handler ran")
			case <-t.Context().Done():
			}
			return cm, nil
		})
		s.createCM(t, "a", "1")
		s.createCM(t, "b", "1")
		if err := s.core.Start(t.Context(), 0); err != nil {
			t.Fatal(err)
		}
		s.waitSeen(t, "h", s.key("a"), "ran while the other key's handler ran")
		s.waitSeen(t, "h", s.key("b"), "ran while the other key's handler ran")
	})
	assertSame(t, perKey(lassoRec.get("h")), perKey(lariatRec.get("h")))
}
