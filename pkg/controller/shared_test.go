package controller

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/cache"
)

func TestSharedHandlerChainsJoinsAndRecovers(t *testing.T) {
	errA := errors.New("a failed")
	errC := errors.New("c failed")
	h := &sharedHandler{gvk: "v1/ConfigMap"}
	var seen []string
	record := func(name string) func(string, runtime.Object) {
		return func(_ string, obj runtime.Object) {
			seen = append(seen, name+":"+obj.(*corev1.ConfigMap).Data["step"])
		}
	}
	h.add("a", SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		record("a")(key, obj)
		next := obj.DeepCopyObject().(*corev1.ConfigMap)
		next.Data["step"] = "after-a"
		return next, errA
	}))
	h.add("b", SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		record("b")(key, obj)
		return (*corev1.ConfigMap)(nil), ErrIgnore // a typed nil passes the object on
	}))
	h.add("c", SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		record("c")(key, obj)
		return nil, errC
	}))
	h.add("d", SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		record("d")(key, obj)
		panic("boom")
	}))
	h.add("e", SharedHandlerFunc(func(key string, obj runtime.Object) (runtime.Object, error) {
		record("e")(key, obj)
		return nil, nil
	}))

	// A real object has a UID; only such returned objects are passed on.
	_, err := h.run("ns/x", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{UID: "u1"}, Data: map[string]string{"step": "start"}}, nil)

	want := "a:start b:after-a c:after-a d:after-a e:after-a"
	if got := strings.Join(seen, " "); got != want {
		t.Errorf("handlers saw %q, want %q", got, want)
	}
	if !errors.Is(err, errA) || !errors.Is(err, errC) {
		t.Errorf("combined error does not reach each cause: %v", err)
	}
	if errors.Is(err, ErrIgnore) {
		t.Errorf("ErrIgnore was not dropped: %v", err)
	}
	var names []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var he *HandlerError
		if !errors.As(e, &he) {
			t.Fatalf("%v is not a *HandlerError", e)
		}
		names = append(names, he.Handler)
	}
	if got := strings.Join(names, ","); got != "a,c,d" {
		t.Errorf("failed handlers %q, want a,c,d", got)
	}
	if !strings.Contains(err.Error(), "handler d panicked: boom") || !strings.Contains(err.Error(), "handler a: a failed") {
		t.Errorf("message does not name the handlers:\n%v", err)
	}
}

func TestSharedHandlerRemove(t *testing.T) {
	h := &sharedHandler{}
	calls := 0
	count := SharedHandlerFunc(func(string, runtime.Object) (runtime.Object, error) { calls++; return nil, nil })
	id := h.add("one", count)
	h.add("two", count)
	h.remove(id)
	if _, err := h.run("k", nil, nil); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("%d handlers ran after removing one of two", calls)
	}
}

func TestOnlyRoutine(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("changed"))
	other := errors.New("other")
	secrets := schema.GroupResource{Resource: "secrets"}
	cases := []struct {
		err  error
		want bool
	}{
		{conflict, true},
		{&HandlerError{Handler: "a", Err: conflict}, true},
		{errors.Join(&HandlerError{Handler: "a", Err: conflict}, &HandlerError{Handler: "b", Err: conflict}), true},
		{errors.Join(&HandlerError{Handler: "a", Err: conflict}, &HandlerError{Handler: "b", Err: other}), false},
		{other, false},
		{&HandlerError{Handler: "a", Err: RetryQuietly(other)}, true},
		{errors.Join(&HandlerError{Handler: "a", Err: RetryQuietly(other)}, &HandlerError{Handler: "b", Err: other}), false},
		// One handler's error that joins a real cause with routine ones,
		// directly or under a wrapper, is not routine.
		{&HandlerError{Handler: "a", Err: errors.Join(other, conflict)}, false},
		{&HandlerError{Handler: "a", Err: fmt.Errorf("sync: %w", errors.Join(RetryQuietly(other), other))}, false},
		{&HandlerError{Handler: "a", Err: fmt.Errorf("sync: %w", errors.Join(RetryQuietly(other), conflict))}, true},
		{fmt.Errorf("%w and %w", conflict, conflict), true},
		// A cache that has not synced yet is waited for quietly; one whose
		// informer is not running will not sync by waiting, so it is seen.
		{&HandlerError{Handler: "a", Err: fmt.Errorf("read: %w", &cache.NotSyncedError{Resource: secrets})}, true},
		{&HandlerError{Handler: "a", Err: &cache.NotSyncedError{Resource: secrets, Stopped: true}}, false},
		{errors.Join(&cache.NotSyncedError{Resource: secrets}, other), false},
	}
	for i, c := range cases {
		if got := onlyRoutine(c.err); got != c.want {
			t.Errorf("case %d: onlyRoutine(%v) = %v, want %v", i, c.err, got, c.want)
		}
	}
}
