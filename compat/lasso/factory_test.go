package lasso_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestForResourceErrorNamesTheResourceOnce: lasso's ForResource has no
// error, so an unserved resource's failure comes from Start, saying once
// which controller failed and why.
func TestForResourceErrorNamesTheResourceOnce(t *testing.T) {
	e := newEnv(t, nil, 5*time.Second)
	gvr := schema.GroupVersionResource{Group: "missing.lariat.dev", Version: "v1", Resource: "gadgets"}
	if sc := e.adapter.ForResource(gvr, true); sc == nil {
		t.Fatal("ForResource returned no controller for an unserved resource")
	}
	err := e.adapter.Start(t.Context(), 1)
	if err == nil {
		t.Fatal("Start did not report the unserved resource")
	}
	prefix := "controller for " + gvr.String() + ": "
	if msg := err.Error(); strings.Count(msg, prefix) != 1 {
		t.Fatalf("Start's error %q: want %q once", msg, prefix)
	}
}
