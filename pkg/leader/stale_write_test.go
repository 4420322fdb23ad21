package leader_test

import (
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/leader"
)

// writerKey is the data key a writing replica's handler sets to its name.
const writerKey = "writer"

// writingReplica is a replica whose every connection (lease and data) goes
// through one proxy, and whose ConfigMap handler merge-patches each
// ConfigMap's data with its name, with a context that outlives the term
// (as a handler registered once for all terms has). before runs at the
// start of each pass.
type writingReplica struct {
	name  string
	e     *leader.Elector
	proxy *controlplanetest.Proxy

	mu       sync.Mutex
	began    []time.Time
	ended    []time.Time
	patchErr []error
}

func startWritingReplica(t *testing.T, ns, name string, before func(r *writingReplica)) *writingReplica {
	t.Helper()
	r := &writingReplica{name: name}
	proxy, cfg := controlplanetest.NewProxy(t, cp.Config())
	r.proxy = proxy
	e := newElectorOn(t, cfg, ns, name)
	r.e = e
	f, cms := fencedConfigMaps(t, e, e.Fence(cfg), ns)
	cms.OnChange(t.Context(), "write", func(_ string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm == nil || cm.Data[writerKey] != "" {
			return nil, nil
		}
		r.mu.Lock()
		r.began = append(r.began, time.Now())
		r.mu.Unlock()
		before(r)
		_, err := cms.Patch(t.Context(), cm.Namespace, cm.Name, types.MergePatchType, []byte(`{"data":{"`+writerKey+`":"`+name+`"}}`))
		r.mu.Lock()
		r.ended = append(r.ended, time.Now())
		r.patchErr = append(r.patchErr, err)
		r.mu.Unlock()
		return nil, nil // not retried: the test looks at the first attempt
	})
	runTerms(t, e, f, proxy)
	return r
}

func (r *writingReplica) passes() (began, ended []time.Time, errs []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.began...), append([]time.Time(nil), r.ended...), append([]error(nil), r.patchErr...)
}

// TestStalledWriteNeverLandsAfterTheTerm (issue 24, case 8): the leader's
// connection stalls (lease and data alike) while its handler's patch is in
// flight, sent while it held the lease. The other replica takes over,
// handles the object and writes it; then the connection resumes. The old
// leader's patch must not land after the new leader's write, and its
// handler must not sit in its client call while the new leader handles the
// object.
func TestStalledWriteNeverLandsAfterTheTerm(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	kube := controlplanetest.Clientset(cp.Config())
	var stallOnce sync.Once
	a := startWritingReplica(t, ns, "a", func(r *writingReplica) {
		stallOnce.Do(func() { r.proxy.Stall() })
	})
	eventually(t, "a leading", a.e.Holding)
	b := startWritingReplica(t, ns, "b", func(*writingReplica) {})
	eventually(t, "b seeing a lead", func() bool { return b.e.Leader() == "a" })

	// Every value the object takes, in the API server's order.
	w, err := kube.CoreV1().ConfigMaps(ns).Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=target"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var (
		histMu  sync.Mutex
		history []string
		ended   bool // the test's last write seen
	)
	go func() {
		for ev := range w.ResultChan() {
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok && ev.Type == watch.Modified {
				histMu.Lock()
				history = append(history, cm.Data[writerKey])
				ended = ended || cm.Data["end"] != ""
				histMu.Unlock()
			}
		}
	}()
	createCM(t, ns, "target")

	eventually(t, "b's write", func() bool {
		cm, err := kube.CoreV1().ConfigMaps(ns).Get(t.Context(), "target", metav1.GetOptions{})
		return err == nil && cm.Data[writerKey] == "b"
	})
	a.proxy.Resume()
	// a reads the lease again through the resumed connection, behind what
	// the stall held back.
	eventually(t, "a seeing b lead", func() bool { return a.e.Leader() == "b" })
	eventually(t, "a's handler returning", func() bool {
		_, ended, _ := a.passes()
		return len(ended) > 0
	})
	// One more write after everything a sent, so the watch has seen what
	// landed before it.
	if _, err := kube.CoreV1().ConfigMaps(ns).Patch(t.Context(), "target", types.MergePatchType, []byte(`{"data":{"end":"1"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the watch seeing the last write", func() bool {
		histMu.Lock()
		defer histMu.Unlock()
		return ended
	})

	histMu.Lock()
	seen := append([]string(nil), history...)
	histMu.Unlock()
	sawB := false
	for _, v := range seen {
		if v == "b" {
			sawB = true
		}
		if sawB && v == "a" {
			t.Errorf("a's patch, sent while it led, landed after b's write: the object's writers in order %q", seen)
			break
		}
	}
	_, aEnded, aErrs := a.passes()
	bBegan, _, _ := b.passes()
	if len(aEnded) == 0 || len(bBegan) == 0 {
		t.Fatalf("a's handler ended %v, b's began %v", aEnded, bBegan)
	}
	if aEnded[0].After(bBegan[0]) {
		t.Errorf("a's handler sat in its patch until %v, after b's handler for the object began at %v (patch: %v)",
			aEnded[0].Format(time.StampMicro), bBegan[0].Format(time.StampMicro), aErrs[0])
	}
	t.Logf("a's patch: %v; writers in order: %q", aErrs[0], seen)
}
