package cache

import (
	"runtime"
	"strings"
	"testing"

	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// TestUserGoexitIsLogged (issue 30, h30h): a Transform's or an index
// function's runtime.Goexit cannot be recovered (it still ends the
// informer's goroutine, see TestAdv8* and docs/safety.md), but it is
// logged at error level with the object's key, so that a frozen cache
// is not silent.
func TestUserGoexitIsLogged(t *testing.T) {
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bad"}}
	exit := func(any) { runtime.Goexit() }
	log, hook := logtest.NewNullLogger()
	transform := safeTransform(func(o any) (any, error) { exit(o); return o, nil }, log)
	indexers := safeIndexers(cache.Indexers{"x": func(o any) ([]string, error) { exit(o); return nil, nil }}, log)
	for name, call := range map[string]func(){
		"transform":      func() { _, _ = transform(obj) },
		"index function": func() { _, _ = indexers["x"](obj) },
	} {
		hook.Reset()
		done := make(chan struct{})
		go func() {
			defer close(done)
			call()
		}()
		<-done
		e := hook.LastEntry()
		if e == nil || e.Data["key"] != "ns/bad" || !strings.Contains(e.Message, name+" ended the informer's goroutine (runtime.Goexit)") {
			t.Fatalf("%s: last log entry %+v, want the Goexit logged with key ns/bad", name, e)
		}
	}
}
