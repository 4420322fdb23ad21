package kubedescriptor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/lariat-dev/lariat/pkg/client"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// adv10Descriptor is a ConfigMap descriptor of a fresh namespace, with the
// clientset a user acts through behind its back.
func adv10Descriptor(t *testing.T, adopt bool) (*kvscheduler.Descriptor, typedcorev1.ConfigMapInterface, string) {
	t.Helper()
	ns := controlplanetest.Namespace(t, cp.Config())
	clients, err := client.NewSharedClientFactory(cp.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := kubedescriptor.New(configMapKind, kubedescriptor.Options{Clients: clients, FieldManager: fieldManager, Namespace: ns, Adopt: adopt})
	if err != nil {
		t.Fatal(err)
	}
	return d, controlplanetest.Clientset(cp.Config()).CoreV1().ConfigMaps(ns), ns
}

func adv10Value(ns, greeting string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "busy", Namespace: ns}, Data: map[string]string{"greeting": greeting}}
}

// TestAdv10UpdateBesideABusyWriterKeepsItsFields: another writer patches
// the object every millisecond (a field of its own, and an annotation)
// while the descriptor updates it. Each update either lands or fails
// with a Conflict (retriable) naming nothing else; the other writer's
// field is never removed or overwritten, the object never deleted, and
// once the writer stops the next update lands.
func TestAdv10UpdateBesideABusyWriterKeepsItsFields(t *testing.T) {
	ctx := t.Context()
	d, kube, ns := adv10Descriptor(t, false)
	key := kubedescriptor.KeyFor(configMapKind, ns, "busy")
	md, err := d.Create(ctx, key, adv10Value(ns, "v0"))
	if err != nil {
		t.Fatal(err)
	}
	uid := md.(types.UID)

	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var writes int
	wg.Go(func() {
		for n := 0; wctx.Err() == nil; n++ {
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"other":"%d"}},"data":{"other":"%d"}}`, n, n)
			if _, err := kube.Patch(wctx, "busy", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "other-writer"}); err == nil {
				writes++
			}
			time.Sleep(time.Millisecond)
		}
	})
	landed, conflicts := 0, 0
	old := adv10Value(ns, "v0")
	for i := 1; i <= 30; i++ {
		next := adv10Value(ns, fmt.Sprintf("v%d", i))
		got, err := d.Update(ctx, key, old, next, md)
		switch {
		case err == nil:
			landed++
			md, old = got, next
		case apierrors.IsConflict(err):
			conflicts++
			if !strings.Contains(err.Error(), "busy") {
				t.Errorf("update %d: conflict %q does not name the object", i, err)
			}
		default:
			t.Errorf("update %d: %v; want success or a Conflict", i, err)
		}
		live, err := kube.Get(ctx, "busy", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("after update %d: %v", i, err)
		}
		if live.UID != uid {
			t.Fatalf("after update %d: the object was replaced (uid %s, want %s)", i, live.UID, uid)
		}
		if i > 2 && (live.Data["other"] == "" || live.Annotations["other"] == "") {
			t.Fatalf("after update %d: the other writer's field is gone: data %v annotations %v", i, live.Data, live.Annotations)
		}
	}
	stop()
	wg.Wait()
	t.Logf("30 updates beside %d writes: %d landed, %d conflicts", writes, landed, conflicts)
	if _, err := d.Update(ctx, key, old, adv10Value(ns, "final"), md); err != nil {
		t.Fatalf("update once the writer stopped: %v", err)
	}
	live, err := kube.Get(ctx, "busy", metav1.GetOptions{})
	if err != nil || live.Data["greeting"] != "final" || live.Data["other"] == "" {
		t.Fatalf("final object %v %v; want greeting final and the other writer's field kept", live, err)
	}
	for _, f := range live.ManagedFields {
		if f.Manager == fieldManager && strings.Contains(string(f.FieldsV1.Raw), `"f:other"`) {
			t.Fatalf("the descriptor took over the other writer's field: %s", f.FieldsV1.Raw)
		}
	}
}

// TestAdv10DeleteRacingARecreateNeverDeletesTheNewObject: a user deletes
// the descriptor's object and makes one of the same name (new UID, no
// label) again and again while the descriptor deletes the value it
// applied. No object the user made is ever deleted by anyone but the
// user: every DELETED event of a user's UID is one the user asked for.
func TestAdv10DeleteRacingARecreateNeverDeletesTheNewObject(t *testing.T) {
	ctx := t.Context()
	d, kube, ns := adv10Descriptor(t, false)
	key := kubedescriptor.KeyFor(configMapKind, ns, "busy")
	w, err := kube.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=busy"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var mu sync.Mutex
	users := map[types.UID]bool{}     // made by the user
	deletedBy := map[types.UID]bool{} // deleted by the user (asked, maybe not done)
	deleted := map[types.UID]bool{}
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type == watch.Deleted {
				cm := ev.Object.(*corev1.ConfigMap)
				mu.Lock()
				deleted[cm.UID] = true
				mu.Unlock()
			}
		}
	}()
	for round := 0; round < 40; round++ {
		md, err := d.Create(ctx, key, adv10Value(ns, "ours"))
		if err != nil {
			var nm *kubedescriptor.NotManagedError
			if errors.As(err, &nm) || apierrors.IsConflict(err) {
				// The user's object from the last round is still there.
				if cm, gerr := kube.Get(ctx, "busy", metav1.GetOptions{}); gerr == nil {
					mu.Lock()
					deletedBy[cm.UID] = true
					mu.Unlock()
					_ = kube.Delete(ctx, "busy", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cm.UID}})
				}
				continue
			}
			t.Fatalf("round %d create: %v", round, err)
		}
		uid := md.(types.UID)
		var wg sync.WaitGroup
		wg.Go(func() {
			// The user replaces the object: delete it, make theirs.
			mu.Lock()
			deletedBy[uid] = true
			mu.Unlock()
			if err := kube.Delete(ctx, "busy", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				t.Errorf("user delete: %v", err)
			}
			cm, err := kube.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "busy"}, Data: map[string]string{"mine": "yes"}}, metav1.CreateOptions{})
			if err == nil {
				mu.Lock()
				users[cm.UID] = true
				mu.Unlock()
			}
		})
		if round%2 == 0 {
			time.Sleep(time.Duration(round%5) * time.Millisecond)
		}
		if err := d.Delete(ctx, key, adv10Value(ns, "ours"), md); err != nil {
			t.Errorf("round %d delete: %v", round, err)
		}
		wg.Wait()
		// The user's object stays until the user deletes it.
		if cm, err := kube.Get(ctx, "busy", metav1.GetOptions{}); err == nil {
			mu.Lock()
			isUser := users[cm.UID]
			deletedBy[cm.UID] = true
			mu.Unlock()
			if !isUser {
				t.Errorf("round %d: the object left is not the user's: %v", round, cm.Labels)
			}
			_ = kube.Delete(ctx, "busy", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cm.UID}})
		}
	}
	// Let the watch deliver the last deletions.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := kube.Get(ctx, "busy", metav1.GetOptions{}); apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("object still present")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // only lets late events arrive; no assert on timing
	mu.Lock()
	defer mu.Unlock()
	for uid := range users {
		if deleted[uid] && !deletedBy[uid] {
			t.Errorf("the user's object %s was deleted, not by the user", uid)
		}
	}
	t.Logf("%d user objects made", len(users))
}
