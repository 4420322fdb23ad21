package lasso_test

import (
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	toolscache "k8s.io/client-go/tools/cache"
)

// resyncs counts the periodic resyncs an informer delivers (updates
// without a new resourceVersion) to a listener of its own.
func (s *side) resyncs(t *testing.T) func() int {
	t.Helper()
	var mu sync.Mutex
	n := 0
	if _, err := s.cms().Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			if oldObj.(*corev1.ConfigMap).ResourceVersion == newObj.(*corev1.ConfigMap).ResourceVersion {
				mu.Lock()
				n++
				mu.Unlock()
			}
		},
	}); err != nil {
		t.Fatal(err)
	}
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// TestSideBySideResync: with a resync period (client-go's least, 1 s),
// handlers see an unchanged object again and again.
func TestSideBySideResync(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{resync: time.Second}, func(t *testing.T, s *side) {
		s.cms().OnChange(s.handlers, "h", record(s, "h"))
		s.start(t)
		s.createCM(t, "a", "1")
		s.waitPasses(t, "h", "a", "1", 3)
		s.rec.add("test", "NS/a", "handled again without a change")
	})
	// How many resyncs a side saw depends on the clock: compared collapsed.
	assertSame(t, lassoRec.collapsed(), lariatRec.collapsed())
}

// TestSideBySideSyncOnlyChangedObjects: with SyncOnlyChangedObjects, the
// resyncs the informer delivers reach no handler; a change does.
func TestSideBySideSyncOnlyChangedObjects(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{resync: time.Second, syncOnlyChanged: true}, func(t *testing.T, s *side) {
		s.cms().OnChange(s.handlers, "h", record(s, "h"))
		resyncs := s.resyncs(t)
		s.start(t)
		s.createCM(t, "a", "1")
		s.waitCount(t, "h", 1)
		before := resyncs()
		eventually(t, "two resyncs of a", func() bool { return resyncs() >= before+2 })
		// The resyncs are ahead of this change in the controller's event
		// stream.
		s.setCM(t, "a", "2")
		s.waitSeen(t, "h", s.key("a"), describeCM(cmNamed("a", "2")))
	})
	assertSame(t, lassoRec.all(), lariatRec.all())
	if got := lariatRec.get("h"); len(got) != 2 {
		t.Fatalf("the handler observed %q, want v=1 and v=2 once each", got)
	}
}

// TestSideBySideStaleCopyAfterOwnWrites: two handlers each write the
// object in one pass (Update, each from the object the one before
// returned); a pass queued meanwhile starts while the watch lags (held
// here), from the copy the first pass started from. lasso runs it: the
// first handler acts again on a state it already moved past, its write
// conflicts, and the key is retried until the cache catches up. Lariat
// skips a pass whose cached copy is older than its handlers' own last
// write (lariat_handler_stale_passes_total; the write's own watch event
// brings the key back). A deliberate difference, docs/comparison.md
// "stale copies after a handler's write": lasso skips only the copy of an
// object its handlers finalized (TestSideBySideTwoOnRemoveNotRunAgainOnAStaleCopy).
func TestSideBySideStaleCopyAfterOwnWrites(t *testing.T) {
	lassoRec, lariatRec := sideBySide(t, sideOptions{}, func(t *testing.T, s *side) {
		cms := s.cms()
		entered, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		writer := func(name string, block bool) func(string, *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			return func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
				if cm == nil || cm.Annotations["seen-"+name] != "" {
					return cm, nil
				}
				if block {
					once.Do(func() {
						close(entered)
						<-release
					})
				}
				was := describeCM(cm)
				cm = cm.DeepCopy()
				if cm.Annotations == nil {
					cm.Annotations = map[string]string{}
				}
				cm.Annotations["seen-"+name] = "yes"
				out, err := cms.Update(cm)
				switch {
				case apierrors.IsConflict(err):
					s.rec.add(name, key, was+" write conflicted")
				case err != nil:
					s.rec.add(name, key, was+" write failed: "+err.Error())
				default:
					s.rec.add(name, key, was+" wrote")
				}
				return out, err
			}
		}
		cms.OnChange(s.handlers, "a", writer("a", true))
		cms.OnChange(s.handlers, "b", writer("b", false))
		s.start(t)
		s.createCM(t, "x", "1")
		<-entered
		s.net.hold()
		cms.Enqueue(s.ns, "x")
		close(release)
		if s.impl == onLasso {
			s.waitCount(t, "a", 2)
		} else {
			eventually(t, "the stale pass skipped", func() bool { return s.metric(t, "lariat_handler_stale_passes_total") > 0 })
		}
		s.net.open()
		eventually(t, "both annotations in the cache", func() bool {
			cm, err := cms.Cache().Get(s.ns, "x")
			return err == nil && cm.Annotations["seen-a"] != "" && cm.Annotations["seen-b"] != ""
		})
	})
	fresh := `NS/x: name="x" v="1" fin=[] deleting=false ann=[]`
	assertObserved(t, onLasso, map[string][]string{"a": compact(lassoRec.get("a"))},
		map[string][]string{"a": {fresh + " wrote", fresh + " write conflicted"}})
	assertObserved(t, onLariat, lariatRec.all(), map[string][]string{
		"a": {fresh + " wrote"},
		"b": {`NS/x: name="x" v="1" fin=[] deleting=false ann=[seen-a=yes] wrote`},
	})
}
