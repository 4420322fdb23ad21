package lasso_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rancher/wrangler/v3/pkg/generic"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// record returns a wrangler OnChange handler that records what it is
// given and passes it on.
func record(s *side, observer string) func(string, *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	return func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		s.rec.add(observer, key, describeCM(cm))
		return cm, nil
	}
}

// TestSideBySideHandlerChain: handlers run in registration order, each
// given what the one before returned, if that is an object with a UID: a
// modified copy is passed on; a placeholder (&ConfigMap{}), a typed nil
// returned through lasso's untyped handler interface and wrangler's nil
// are not, neither for an object nor for a deletion's nil.
func TestSideBySideHandlerChain(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{}, func(t *testing.T, s *side) {
		cms := s.cms()
		cms.OnChange(s.handlers, "modify", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			s.rec.add("modify", key, describeCM(cm))
			if cm == nil {
				return nil, nil
			}
			cm = cm.DeepCopy()
			if cm.Annotations == nil {
				cm.Annotations = map[string]string{}
			}
			cm.Annotations["seen-modify"] = "yes" // in memory only
			return cm, nil
		})
		cms.OnChange(s.handlers, "placeholder", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			s.rec.add("placeholder", key, describeCM(cm))
			return &corev1.ConfigMap{}, nil
		})
		cms.AddGenericHandler(s.handlers, "typed-nil", func(key string, obj runtime.Object) (runtime.Object, error) {
			cm, _ := obj.(*corev1.ConfigMap)
			s.rec.add("typed-nil", key, describeCM(cm))
			return (*corev1.ConfigMap)(nil), nil
		})
		cms.OnChange(s.handlers, "wrangler-nil", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			s.rec.add("wrangler-nil", key, describeCM(cm))
			return nil, nil
		})
		cms.OnChange(s.handlers, "last", record(s, "last"))
		s.start(t)
		s.createCM(t, "a", "1")
		s.waitCount(t, "last", 1)
		s.deleteCM(t, "a")
		s.waitSeen(t, "last", s.key("a"), "nil")
	})
	assertSame(t, lassoRec.all(), lariatRec.all())
	if got := lariatRec.get("last"); len(got) != 2 || got[0] != `NS/a: name="a" v="1" fin=[] deleting=false ann=[seen-modify=yes]` {
		t.Fatalf("the last handler observed %q, want the modified copy, then nil", got)
	}
}

// TestSideBySideErrSkip: a handler returning wrangler's generic.ErrSkip
// (lasso's ErrIgnore), wrapped or not, is not retried, and the handlers
// after it run.
func TestSideBySideErrSkip(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{}, func(t *testing.T, s *side) {
		cms := s.cms()
		cms.OnChange(s.handlers, "skip", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			s.rec.add("skip", key, describeCM(cm))
			if cm != nil && cm.Name == "wrapped" {
				return cm, fmt.Errorf("not mine: %w", generic.ErrSkip)
			}
			return cm, generic.ErrSkip
		})
		cms.OnChange(s.handlers, "after", record(s, "after"))
		s.start(t)
		s.createCM(t, "plain", "1")
		s.waitSeen(t, "after", s.key("plain"), describeCM(cmNamed("plain", "1")))
		s.createCM(t, "wrapped", "1")
		s.waitSeen(t, "after", s.key("wrapped"), describeCM(cmNamed("wrapped", "1")))
		// A change of each afterwards: a retry of the skipped passes
		// would show as a repeated v=1 before it.
		s.setCM(t, "plain", "2")
		s.setCM(t, "wrapped", "2")
		s.waitSeen(t, "after", s.key("plain"), describeCM(cmNamed("plain", "2")))
		s.waitSeen(t, "after", s.key("wrapped"), describeCM(cmNamed("wrapped", "2")))
	})
	assertSame(t, lassoRec.all(), lariatRec.all())
	if n := lariatRec.count("skip"); n != 4 {
		t.Fatalf("the skipping handler ran %d times, want 4 (no retry): %q", n, lariatRec.get("skip"))
	}
}

// cmNamed is the ConfigMap the tests create, as handlers observe it.
func cmNamed(name, value string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{Data: map[string]string{"v": value}}
	cm.Name = name
	return cm
}

// TestSideBySideErrorsAreRetried: a failing handler's key is retried until
// it succeeds; every handler runs on every pass, the failing one's returned
// object still passed on.
func TestSideBySideErrorsAreRetried(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{}, func(t *testing.T, s *side) {
		var mu sync.Mutex
		attempts := 0
		cms := s.cms()
		cms.OnChange(s.handlers, "flaky", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			mu.Lock()
			attempts++
			n := attempts
			mu.Unlock()
			if n <= 2 {
				s.rec.add("flaky", key, describeCM(cm)+" failed")
				out := cm.DeepCopy()
				out.Annotations = map[string]string{"seen-failure": fmt.Sprint(n)}
				return out, errors.New("not yet")
			}
			s.rec.add("flaky", key, describeCM(cm)+" succeeded")
			return cm, nil
		})
		cms.OnChange(s.handlers, "after", record(s, "after"))
		s.start(t)
		s.createCM(t, "a", "1")
		s.waitCount(t, "after", 3)
		s.setCM(t, "a", "2") // a barrier: no fourth pass over v=1
		s.waitSeen(t, "after", s.key("a"), describeCM(cmNamed("a", "2")))
	})
	assertSame(t, lassoRec.all(), lariatRec.all())
	if n := lariatRec.count("flaky"); n != 4 {
		t.Fatalf("flaky ran %d times, want 4: %q", n, lariatRec.get("flaky"))
	}
}

// TestSideBySideEnqueue: Enqueue (and EnqueueAfter) of a key with no
// object, before and after Start (the handlers see nil), and EnqueueAfter from a handler (the
// key is handled again, with no event).
func TestSideBySideEnqueue(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{}, func(t *testing.T, s *side) {
		cms := s.cms()
		var once sync.Once
		cms.OnChange(s.handlers, "h", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			s.rec.add("h", key, describeCM(cm))
			if cm != nil && cm.Name == "a" {
				once.Do(func() {
					cms.EnqueueAfter(s.ns, "a", 300*time.Millisecond)
					cms.Enqueue(s.ns, "ghost")
					// Outside the factory's namespace: nil on both.
					cms.Enqueue("elsewhere", "a")
				})
			}
			return cm, nil
		})
		cms.Enqueue(s.ns, "ghost-before-start")
		cms.EnqueueAfter(s.ns, "ghost-after-before-start", 50*time.Millisecond)
		s.start(t)
		s.waitSeen(t, "h", s.key("ghost-before-start"), "nil")
		s.waitSeen(t, "h", s.key("ghost-after-before-start"), "nil")
		s.createCM(t, "a", "1")
		s.waitSeen(t, "h", s.key("ghost"), "nil")
		s.waitSeen(t, "h", "elsewhere/a", "nil")
		s.waitPasses(t, "h", "a", "1", 2)
		s.setCM(t, "a", "2") // a barrier: no third pass over v=1
		s.waitSeen(t, "h", s.key("a"), describeCM(cmNamed("a", "2")))
	})
	// The ghost key's pass and a's run in either order; per key, the
	// sequences are the same.
	assertSame(t, perKey(lassoRec.get("h")), perKey(lariatRec.get("h")))
}

// TestSideBySideEnqueueAfterThenEnqueue: a handler calls EnqueueAfter and
// then Enqueue for its key. lasso's Enqueue is a rate-limited add, a
// delayed add of a few milliseconds, and client-go's delaying queue keeps
// one delay per key, the sooner: the EnqueueAfter is lost, the key handled
// once more. Lariat's Enqueue adds the key at once (docs/comparison.md,
// "first sight"), and the EnqueueAfter still fires: the key is handled
// twice more. A deliberate difference: the later look the handler asked
// for is not dropped.
func TestSideBySideEnqueueAfterThenEnqueue(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{}, func(t *testing.T, s *side) {
		cms := s.cms()
		var once sync.Once
		cms.OnChange(s.handlers, "h", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			s.rec.add("h", key, describeCM(cm))
			if cm != nil && cm.Name == "a" {
				once.Do(func() {
					cms.EnqueueAfter(s.ns, "a", 300*time.Millisecond)
					cms.Enqueue(s.ns, "a")
					// The same delay for another key, whose pass shows
					// that the delay has passed.
					cms.EnqueueAfter(s.ns, "marker", 300*time.Millisecond)
				})
			}
			return cm, nil
		})
		s.start(t)
		s.createCM(t, "a", "1")
		s.waitSeen(t, "h", s.key("marker"), "nil")
		s.waitPasses(t, "h", "a", "1", 2)
		if s.impl == onLariat {
			s.waitPasses(t, "h", "a", "1", 3)
		}
		s.setCM(t, "a", "2") // a barrier: no further pass over v=1
		s.waitSeen(t, "h", s.key("a"), describeCM(cmNamed("a", "2")))
	})
	v1, v2 := "NS/a: "+describeCM(cmNamed("a", "1")), "NS/a: "+describeCM(cmNamed("a", "2"))
	assertObserved(t, onLasso, map[string][]string{"h": perKey(lassoRec.get("h"))["NS/a"]}, map[string][]string{"h": {v1, v1, v2}})
	assertObserved(t, onLariat, map[string][]string{"h": perKey(lariatRec.get("h"))["NS/a"]}, map[string][]string{"h": {v1, v1, v1, v2}})
}

// waitPasses waits until observer has seen the ConfigMap name with data
// v=value n times.
func (s *side) waitPasses(t *testing.T, observer, name, value string, n int) {
	t.Helper()
	line := "NS/" + name + ": " + describeCM(cmNamed(name, value))
	eventually(t, fmt.Sprintf("%s: %s sees %s %d times", s.impl, observer, line, n), func() bool {
		c := 0
		for _, l := range s.rec.get(observer) {
			if l == line {
				c++
			}
		}
		return c >= n
	})
}

// perKey splits one observer's observations by key.
func perKey(seen []string) map[string][]string {
	out := map[string][]string{}
	for _, line := range seen {
		key, _, _ := strings.Cut(line, ": ")
		out[key] = append(out[key], line)
	}
	return out
}

// TestSideBySideLateHandler: a handler registered after Start is given
// every cached object, and the handlers registered before run again on
// them (lasso enqueues every key for the chain).
func TestSideBySideLateHandler(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{}, func(t *testing.T, s *side) {
		cms := s.cms()
		cms.OnChange(s.handlers, "early", record(s, "early"))
		s.createCM(t, "a", "1")
		s.start(t)
		s.waitCount(t, "early", 1)
		cms.OnChange(s.handlers, "late", record(s, "late"))
		s.waitCount(t, "late", 1)
		s.waitCount(t, "early", 2)
		s.setCM(t, "a", "2") // a barrier: no third pass over v=1
		s.waitSeen(t, "late", s.key("a"), describeCM(cmNamed("a", "2")))
	})
	assertSame(t, lassoRec.all(), lariatRec.all())
}

// TestSideBySideHandlerRemovedWithItsContext: a handler registered with a
// context stops being called once the context ends; the others go on.
func TestSideBySideHandlerRemovedWithItsContext(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{}, func(t *testing.T, s *side) {
		cms := s.cms()
		tempCtx, cancel := context.WithCancel(t.Context())
		cms.OnChange(tempCtx, "temp", record(s, "temp"))
		cms.OnChange(s.handlers, "stay", record(s, "stay"))
		s.start(t)
		s.createCM(t, "a", "1")
		s.waitCount(t, "temp", 1)
		cancel()
		// Removal is asynchronous on both cores: enqueue until a pass
		// runs without the cancelled handler.
		eventually(t, "a pass without the cancelled handler", func() bool {
			temp, stay := s.rec.count("temp"), s.rec.count("stay")
			cms.Enqueue(s.ns, "a")
			s.waitCount(t, "stay", stay+1)
			return s.rec.count("temp") == temp
		})
		s.setCM(t, "a", "2")
		s.waitSeen(t, "stay", s.key("a"), describeCM(cmNamed("a", "2")))
	})
	assertSame(t, lassoRec.collapsed(), lariatRec.collapsed())
	if got := lariatRec.collapsed()["temp"]; len(got) != 1 {
		t.Fatalf("the cancelled handler observed %q, want only v=1", got)
	}
}
