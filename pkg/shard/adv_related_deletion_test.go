package shard

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
	"github.com/lariat-dev/lariat/pkg/relatedresource"
)

// advRun is one handler run of a member, in the order the runs began.
type advRun struct {
	member string // "a" or "b"
	name   string // the ConfigMap's name
	gone   bool   // the handler was given nil: a deletion
}

// advRuns records every ConfigMap handler run of the test's members.
type advRuns struct {
	mu   sync.Mutex
	runs []advRun
}

func (r *advRuns) add(run advRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs = append(r.runs, run)
}

// count returns how many runs match.
func (r *advRuns) count(member, name string, gone bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, run := range r.runs {
		if run.member == member && run.name == name && run.gone == gone {
			n++
		}
	}
	return n
}

// advStartMember joins ring as a member named label with one worker: its
// ConfigMap handler records each run in runs, and a relatedresource watch
// of Secrets (a kind not in the ring, so every member caches all of them)
// enqueues the ConfigMaps each Secret names in its "enqueue" data key, one
// after another, as a wrangler operator's related-resource resolver would
// enqueue an owner. It returns the member once its factory runs.
func advStartMember(t *testing.T, ring Ring, label string, runs *advRuns) *Member {
	t.Helper()
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	m, err := NewMember(kube.CoordinationV1(), ring)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	controlplanetest.Run(t, func(ctx context.Context) error {
		return m.Run(ctx, func(ctx context.Context) error {
			opts := &generic.FactoryOptions{Cache: cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ring.Namespace}}}
			f, err := generic.NewFactoryFromConfig(m.Fence(cfg), nil, m.FactoryOptions(cfg, opts))
			if err != nil {
				return err
			}
			cms, err := generic.NewController[*corev1.ConfigMap, *corev1.ConfigMapList](corev1.SchemeGroupVersion.WithKind("ConfigMap"), "configmaps", true, f.ControllerFactory())
			if err != nil {
				return err
			}
			secrets, err := generic.NewController[*corev1.Secret, *corev1.SecretList](corev1.SchemeGroupVersion.WithKind("Secret"), "secrets", true, f.ControllerFactory())
			if err != nil {
				return err
			}
			cms.OnChange(ctx, "record", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
				_, name, _ := splitKey(key)
				runs.add(advRun{member: label, name: name, gone: cm == nil})
				return cm, nil
			})
			relatedresource.Watch(ctx, "enqueue-configmaps", func(namespace, _ string, obj runtime.Object) ([]relatedresource.Key, error) {
				s, ok := obj.(*corev1.Secret)
				if !ok {
					return nil, nil
				}
				var keys []relatedresource.Key
				for _, name := range []string{string(s.Data["first"]), string(s.Data["then"])} {
					if name != "" {
						keys = append(keys, relatedresource.NewKey(namespace, name))
					}
				}
				return keys, nil
			}, cms, secrets)
			if err := f.Start(ctx, 1); err != nil {
				return err
			}
			close(started)
			<-ctx.Done()
			return f.Wait(context.WithoutCancel(ctx))
		})
	})
	select {
	case <-started:
	case <-time.After(2 * time.Minute):
		t.Fatalf("member %s did not start", label)
	}
	return m
}

func splitKey(key string) (string, string, error) {
	for i := range len(key) {
		if key[i] == '/' {
			return key[:i], key[i+1:], nil
		}
	}
	return "", key, nil
}

// TestAdvRelatedEnqueueDeliversADeletionToAMemberThatNeverHeldTheObject: a
// ConfigMap is assigned to member B only, handled there, deleted, and B's
// handlers see the deletion. Then a Secret (a kind outside the ring, which
// every member handles) names it, and a relatedresource resolver enqueues
// it on member A, which never held it. A's gate finds it absent from A's
// cache, reads it from the API server, gets NotFound and admits the pass:
// A's handlers are told of the deletion of an object A never held, beside
// B's. (docs/replicas.md: "a deletion reaches the handlers of the replica
// that held the object, no other".) A ConfigMap of A's own, enqueued right
// after on A's single worker (FIFO within a priority), is the barrier: once
// A handled it the second time, A's pass over the deleted object is over.
func TestAdvRelatedEnqueueDeliversADeletionToAMemberThatNeverHeldTheObject(t *testing.T) {
	cfg := cp.Config()
	kube := controlplanetest.Clientset(cfg)
	ns := controlplanetest.Namespace(t, cfg)
	ring := Ring{Name: "advrel", Namespace: ns, Kinds: []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}}}
	runs := &advRuns{}
	a := advStartMember(t, ring, "a", runs)
	b := advStartMember(t, ring, "b", runs)
	ctx := t.Context()

	// The sharder's part, by hand: "theirs" is B's, "mine" is A's.
	for name, id := range map[string]string{"theirs": b.ID(), "mine": a.ID()} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{AssignmentLabel(ring.Name): id}}}
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	controlplanetest.Eventually(t, time.Minute, "B handles theirs and A handles mine", func() bool {
		return runs.count("b", "theirs", false) > 0 && runs.count("a", "mine", false) > 0
	})
	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, "theirs", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "B's handlers see the deletion of theirs", func() bool {
		return runs.count("b", "theirs", true) > 0
	})
	mineBefore := runs.count("a", "mine", false)

	// A related object names "theirs", then "mine": every member's
	// resolver enqueues both, in that order.
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "related"},
		Data:       map[string][]byte{"first": []byte("theirs"), "then": []byte("mine")},
	}
	if _, err := kube.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	controlplanetest.Eventually(t, time.Minute, "A handles mine again (enqueued after theirs)", func() bool {
		return runs.count("a", "mine", false) > mineBefore
	})
	if n := runs.count("a", "theirs", true); n > 0 {
		t.Fatalf("member A, which never held ConfigMap %s/theirs (member B held it and handled its deletion), ran its handlers %d time(s) for its deletion (obj nil)", ns, n)
	}
	if n := runs.count("a", "theirs", false); n > 0 {
		t.Fatalf("member A ran its handlers %d time(s) for ConfigMap %s/theirs, which it never held", n, ns)
	}
}
