package generic_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/generic"
)

func TestFinalizerName(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, name := range []string{"cleanup", "Clean_up.v2", "my handler", "-x-", "", "ünïcode", "a/b", long, long + "y"} {
		fin := generic.FinalizerName(name)
		if errs := validation.IsQualifiedName(fin); len(errs) != 0 {
			t.Errorf("FinalizerName(%q) = %q is invalid: %v", name, fin, errs)
		}
		if !strings.HasPrefix(fin, generic.FinalizerPrefix) {
			t.Errorf("FinalizerName(%q) = %q lacks the prefix", name, fin)
		}
		if again := generic.FinalizerName(name); again != fin {
			t.Errorf("FinalizerName(%q) is not stable: %q, %q", name, fin, again)
		}
	}
	if got := generic.FinalizerName("cleanup"); got != "lariat.dev/cleanup" {
		t.Errorf("a valid name changed: %q", got)
	}
	if generic.FinalizerName("my handler") == generic.FinalizerName("my-handler") {
		t.Error("names that differ in an invalid character share a finalizer")
	}
	if generic.FinalizerName(long) == generic.FinalizerName(long+"y") {
		t.Error("long names that differ past the limit share a finalizer")
	}
}

// removals records an OnRemove handler's calls per key.
type removals struct {
	mu        sync.Mutex
	calls     map[string]int
	problems  []string
	failFirst int // calls per key that fail before one succeeds
	// check runs on every call with the object being deleted.
	check func(cm *corev1.ConfigMap) error
}

func (r *removals) handler(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[key]++
	switch {
	case cm == nil:
		r.problems = append(r.problems, key+": handler given nil")
	case cm.DeletionTimestamp == nil:
		r.problems = append(r.problems, key+": handler given an object not being deleted")
	case r.check != nil:
		if err := r.check(cm); err != nil {
			r.problems = append(r.problems, key+": "+err.Error())
		}
	}
	if r.calls[key] <= r.failFirst {
		return nil, fmt.Errorf("not yet (call %d)", r.calls[key])
	}
	return nil, nil
}

func (r *removals) count(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[key]
}

func (r *removals) assertNoProblems(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.problems {
		t.Error(p)
	}
}

func setFinalizers(t *testing.T, ns, name string, edit func([]string) []string) {
	t.Helper()
	cms := kube().CoreV1().ConfigMaps(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := cms.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Finalizers = edit(cm.Finalizers)
		_, err = cms.Update(context.Background(), cm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func finalizersAre(t *testing.T, ns, name string, want ...string) func() bool {
	return func() bool {
		cm, err := kube().CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
		return err == nil && slices.Equal(cm.Finalizers, want)
	}
}

func gone(ns, name string) func() bool {
	return func() bool {
		_, err := kube().CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}
}

func TestOnRemoveLifecycle(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fin := generic.FinalizerName("cleanup")
	const first, later = "example.com/first", "example.com/later"
	rec := &removals{calls: map[string]int{}, failFirst: 2}
	rec.check = func(cm *corev1.ConfigMap) error {
		// Until the handler succeeds the finalizer must stay.
		live, err := kube().CoreV1().ConfigMaps(cm.Namespace).Get(context.Background(), cm.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !slices.Contains(live.Finalizers, fin) {
			return fmt.Errorf("finalizer gone before the handler succeeded: %v", live.Finalizers)
		}
		return nil
	}

	createCM(t, ns, "plain")
	createCM(t, ns, "with-other", first)
	f := newFactory(t, cp.Config(), ns)
	newConfigMaps(t, f).OnRemove(t.Context(), "cleanup", rec.handler)
	start(t, f)

	eventually(t, "finalizer added to an object without finalizers", finalizersAre(t, ns, "plain", fin))
	eventually(t, "finalizer appended to an object with one", finalizersAre(t, ns, "with-other", first, fin))
	if n := rec.count(ns+"/plain") + rec.count(ns+"/with-other"); n != 0 {
		t.Fatalf("handler called %d times for objects not being deleted", n)
	}

	// Someone else's finalizer, added after ours, survives ours.
	setFinalizers(t, ns, "plain", func(f []string) []string { return append(f, later) })
	if err := kube().CoreV1().ConfigMaps(ns).Delete(t.Context(), "plain", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "our finalizer removed after the handler succeeded, the other kept", finalizersAre(t, ns, "plain", later))
	if n := rec.count(ns + "/plain"); n < rec.failFirst+1 {
		t.Errorf("handler called %d times, want at least %d (two failures, one success)", n, rec.failFirst+1)
	}
	setFinalizers(t, ns, "plain", func([]string) []string { return nil })
	eventually(t, "object deleted once the other finalizer is gone", gone(ns, "plain"))

	// A finalizer before ours survives too.
	if err := kube().CoreV1().ConfigMaps(ns).Delete(t.Context(), "with-other", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "only our finalizer removed", finalizersAre(t, ns, "with-other", first))
	setFinalizers(t, ns, "with-other", func([]string) []string { return nil })
	eventually(t, "object deleted", gone(ns, "with-other"))

	// An object whose only finalizer is ours goes away when the handler
	// succeeds.
	createCM(t, ns, "only-ours")
	eventually(t, "finalizer added", finalizersAre(t, ns, "only-ours", fin))
	if err := kube().CoreV1().ConfigMaps(ns).Delete(t.Context(), "only-ours", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "object deleted after the handler succeeded", gone(ns, "only-ours"))
	rec.assertNoProblems(t)
}

func TestOnRemoveSkipsObjectsAlreadyBeingDeleted(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	const hold = "example.com/hold"
	createCM(t, ns, "doomed", hold)
	if err := kube().CoreV1().ConfigMaps(ns).Delete(t.Context(), "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	patches := &requestCounter{pathPart: "/configmaps/doomed"}
	f := newFactory(t, patches.config(), ns)
	cms := newConfigMaps(t, f)
	rec := &removals{calls: map[string]int{}}
	cms.OnRemove(t.Context(), "cleanup", rec.handler)
	// Handlers run in order, so once this one has seen the object the
	// remove handler has dealt with it.
	witness := newSeen()
	cms.OnChange(t.Context(), "witness", func(key string, cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		witness.record(key, cm)
		return nil, nil
	})
	start(t, f)
	createCM(t, ns, "alive")
	eventually(t, "the remove handler at work on other objects", finalizersAre(t, ns, "alive", generic.FinalizerName("cleanup")))

	key := ns + "/doomed"
	eventually(t, "the object being deleted handled", func() bool {
		cm, _, _ := witness.get(key)
		return cm != nil && cm.DeletionTimestamp != nil
	})
	if n := rec.count(key); n != 0 {
		t.Errorf("remove handler called %d times for an object that never got its finalizer", n)
	}
	if n := patches.count("PATCH"); n != 0 {
		t.Errorf("%d patches sent for an object that never got the finalizer", n)
	}
	if cm := getCM(t, ns, "doomed"); !slices.Equal(cm.Finalizers, []string{hold}) {
		t.Errorf("finalizers %v, want only %s", cm.Finalizers, hold)
	}

	setFinalizers(t, ns, "doomed", func([]string) []string { return nil })
	eventually(t, "deletion not blocked", gone(ns, "doomed"))
	eventually(t, "deletion seen", func() bool { cm, ok, _ := witness.get(key); return ok && cm == nil })
	if n := rec.count(key); n != 0 {
		t.Errorf("remove handler called %d times", n)
	}
}

func TestOnRemoveUnderConcurrentWrites(t *testing.T) {
	// Without finalizers the add is guarded by a test for null, with some
	// by a test of the whole list.
	t.Run("no finalizers", func(t *testing.T) { testConcurrentWrites(t) })
	t.Run("one finalizer", func(t *testing.T) { testConcurrentWrites(t, "example.com/before") })
}

func testConcurrentWrites(t *testing.T, initial ...string) {
	ns := controlplanetest.Namespace(t, cp.Config())
	fin := generic.FinalizerName("cleanup")
	const writes = 100
	const theirs = "example.com/writer"
	createCM(t, ns, "busy", initial...)

	// The writer updates labels and data as fast as it can, with
	// optimistic concurrency as any well-behaved client does, and adds a
	// finalizer of its own halfway through.
	var writerConflicts counter
	writing := make(chan struct{})
	writerDone := make(chan error, 1)
	go func() {
		cms := kube().CoreV1().ConfigMaps(ns)
		for i := 1; i <= writes; i++ {
			err := retry.OnError(retry.DefaultBackoff, func(err error) bool {
				if apierrors.IsConflict(err) {
					writerConflicts.inc()
					return true
				}
				return false
			}, func() error {
				cm, err := cms.Get(context.Background(), "busy", metav1.GetOptions{})
				if err != nil {
					return err
				}
				cm.Labels = map[string]string{"write": strconv.Itoa(i)}
				cm.Data = map[string]string{"v": strconv.Itoa(i)}
				if i == writes/2 {
					cm.Finalizers = append(cm.Finalizers, theirs)
				}
				_, err = cms.Update(context.Background(), cm, metav1.UpdateOptions{})
				return err
			})
			if err != nil {
				writerDone <- fmt.Errorf("write %d: %w", i, err)
				return
			}
			if i == 5 {
				close(writing)
			}
		}
		writerDone <- nil
	}()
	select {
	case <-writing:
	case err := <-writerDone:
		t.Fatal(err)
	}

	patches := &requestCounter{pathPart: "/configmaps/busy"}
	f := newFactory(t, patches.config(), ns)
	cms := newConfigMaps(t, f)
	rec := &removals{calls: map[string]int{}}
	cms.OnRemove(t.Context(), "cleanup", rec.handler)
	var rounds counter
	cms.OnChange(t.Context(), "rounds", func(string, *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		rounds.inc()
		return nil, nil
	})
	start(t, f)

	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
	eventually(t, "both finalizers present", func() bool {
		cm := getCM(t, ns, "busy")
		return slices.Contains(cm.Finalizers, fin) && slices.Contains(cm.Finalizers, theirs)
	})
	cm := getCM(t, ns, "busy")
	for _, want := range append([]string{fin, theirs}, initial...) {
		if n := countOf(cm.Finalizers, want); n != 1 {
			t.Errorf("finalizer %s present %d times: %v", want, n, cm.Finalizers)
		}
	}
	if cm.Labels["write"] != strconv.Itoa(writes) || cm.Data["v"] != strconv.Itoa(writes) {
		t.Errorf("the writer's last change was lost: labels %v, data %v", cm.Labels, cm.Data)
	}
	if n := rec.count(ns + "/busy"); n != 0 {
		t.Errorf("remove handler called %d times for an object not being deleted", n)
	}
	// The finalizer is added once; a patch is repeated only when the cache
	// was stale, and a failed one costs one more round. Merge patches or
	// updates guarded by resourceVersion would instead conflict with most
	// of the writer's updates.
	t.Logf("patches %d, handler rounds %d, writer conflicts %d", patches.count("PATCH"), rounds.get(), writerConflicts.get())
	if n := patches.count("PATCH"); n < 1 || n > 10 {
		t.Errorf("%d finalizer patches for one object, want 1 to 10", n)
	}
	if n := rounds.get(); n > 2*writes+20 {
		t.Errorf("%d handler rounds for %d writes: the handler is retrying in a loop", n, writes)
	}
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// TestJSONPatchAssumptions pins the API server behaviour OnRemove's patches
// rely on, so an API server that changes it fails here first.
func TestJSONPatchAssumptions(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx := t.Context()
	cms := kube().CoreV1().ConfigMaps(ns)
	cm := createCM(t, ns, "a")
	patch := func(ops string) (*corev1.ConfigMap, error) {
		return cms.Patch(ctx, "a", types.JSONPatchType, []byte(ops), metav1.PatchOptions{})
	}
	uidTest := `{"op":"test","path":"/metadata/uid","value":"` + string(cm.UID) + `"}`

	// A test for null passes when finalizers are absent.
	got, err := patch(`[` + uidTest + `,{"op":"test","path":"/metadata/finalizers","value":null},{"op":"add","path":"/metadata/finalizers","value":["x.io/a"]}]`)
	if err != nil || !slices.Equal(got.Finalizers, []string{"x.io/a"}) {
		t.Fatalf("test null on absent finalizers: %v, %v", got, err)
	}
	// ... and fails when they are present, as a 422 without causes.
	_, err = patch(`[{"op":"test","path":"/metadata/finalizers","value":null}]`)
	assertFailedTest(t, "test null on present finalizers", err)
	// A test of the whole list compares it.
	if _, err = patch(`[{"op":"test","path":"/metadata/finalizers","value":["x.io/a"]},{"op":"add","path":"/metadata/finalizers/-","value":"x.io/b"}]`); err != nil {
		t.Fatalf("test of the equal list: %v", err)
	}
	_, err = patch(`[{"op":"test","path":"/metadata/finalizers","value":["x.io/a"]}]`)
	assertFailedTest(t, "test of a different list", err)
	_, err = patch(`[{"op":"test","path":"/metadata/uid","value":"other"}]`)
	assertFailedTest(t, "test of another uid", err)
	_, err = patch(`[{"op":"test","path":"/metadata/finalizers/5","value":"x.io/a"},{"op":"remove","path":"/metadata/finalizers/5"}]`)
	assertFailedTest(t, "test of a missing index", err)

	// An emptied list is stored as absent, so a test for null passes again.
	if _, err := cms.Patch(ctx, "a", types.MergePatchType, []byte(`{"metadata":{"finalizers":[]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := patch(`[{"op":"test","path":"/metadata/finalizers","value":null}]`); err != nil {
		t.Errorf("test null after emptying the list: %v", err)
	}

	// Validation failures, unlike failed tests, name the object and fields.
	if _, err := patch(`[{"op":"add","path":"/metadata/finalizers","value":["x.io/keep"]}]`); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = patch(`[{"op":"add","path":"/metadata/finalizers/-","value":"x.io/new"}]`)
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil || len(status.Status().Details.Causes) == 0 {
		t.Errorf("adding a finalizer during deletion: %v, want 422 with causes", err)
	}
	_, err = patch(`[{"op":"test","path":"/metadata/deletionTimestamp","value":null}]`)
	assertFailedTest(t, "test null on deletionTimestamp during deletion", err)
}

func assertFailedTest(t *testing.T, what string, err error) {
	t.Helper()
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		t.Errorf("%s: %v, want 422 Invalid", what, err)
		return
	}
	if d := status.Status().Details; d != nil && (d.Name != "" || len(d.Causes) != 0) {
		t.Errorf("%s: details %+v, want none", what, d)
	}
}

// TestOnRemoveStaleObjects hands the remove handler the objects a lagging
// cache would, deterministically: its patches must then fail and change
// nothing, so no finalizer is added twice and no other one removed.
func TestOnRemoveStaleObjects(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	ctx := t.Context()
	fin := generic.FinalizerName("cleanup")
	const other = "example.com/other"
	cms := newConfigMaps(t, newFactory(t, cp.Config(), ns))
	var calls counter
	h := generic.RemoveHandlerForTest(cms, ctx, "cleanup", func(string, runtime.Object) (runtime.Object, error) {
		calls.inc()
		return nil, nil
	})
	isStale := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "changed since it was read") {
			t.Errorf("%s: %v, want a failed patch test", what, err)
		}
	}

	for _, initial := range [][]string{nil, {other}} {
		name := fmt.Sprintf("add-%d", len(initial))
		stale := createCM(t, ns, name, initial...)
		if _, err := h.OnChange(ns+"/"+name, stale); err != nil {
			t.Fatal(err)
		}
		want := append(slices.Clone(initial), fin)
		if !finalizersAre(t, ns, name, want...)() {
			t.Fatalf("%s: finalizers %v, want %v", name, getCM(t, ns, name).Finalizers, want)
		}
		_, err := h.OnChange(ns+"/"+name, stale)
		isStale("adding again from a stale object", err)
		if !finalizersAre(t, ns, name, want...)() {
			t.Errorf("%s: finalizers %v after a stale add, want %v", name, getCM(t, ns, name).Finalizers, want)
		}
	}

	// Removal from a stale object whose indexes no longer hold ours.
	createCM(t, ns, "remove", other)
	setFinalizers(t, ns, "remove", func(f []string) []string { return []string{fin, other} })
	if err := kube().CoreV1().ConfigMaps(ns).Delete(ctx, "remove", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	stale := getCM(t, ns, "remove")
	setFinalizers(t, ns, "remove", func(f []string) []string { return []string{other, fin} })
	_, err := h.OnChange(ns+"/remove", stale)
	isStale("removing at a stale index", err)
	if !finalizersAre(t, ns, "remove", other, fin)() {
		t.Errorf("finalizers %v after a stale removal, want both", getCM(t, ns, "remove").Finalizers)
	}
	if _, err := h.OnChange(ns+"/remove", getCM(t, ns, "remove")); err != nil {
		t.Fatal(err)
	}
	if !finalizersAre(t, ns, "remove", other)() {
		t.Errorf("finalizers %v, want only %s", getCM(t, ns, "remove").Finalizers, other)
	}

	// Removal from a stale copy of an object since deleted and recreated
	// under the same name: the UID test protects the new object.
	createCM(t, ns, "reborn", fin)
	if err := kube().CoreV1().ConfigMaps(ns).Delete(ctx, "reborn", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	old := getCM(t, ns, "reborn")
	setFinalizers(t, ns, "reborn", func([]string) []string { return nil })
	eventually(t, "old object gone", gone(ns, "reborn"))
	createCM(t, ns, "reborn", fin)
	_, err = h.OnChange(ns+"/reborn", old)
	isStale("removing from a recreated object", err)
	if !finalizersAre(t, ns, "reborn", fin)() {
		t.Errorf("the recreated object lost its finalizer: %v", getCM(t, ns, "reborn").Finalizers)
	}

	// A deleted object is nothing to do.
	if obj, err := h.OnChange(ns+"/gone", nil); obj != nil || err != nil {
		t.Errorf("deleted object: %v, %v", obj, err)
	}
	if _, err := h.OnChange(ns+"/missing", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "missing", Namespace: ns, UID: "x"}}); err != nil {
		t.Errorf("object deleted before the patch: %v, want nothing to do", err)
	}
}
