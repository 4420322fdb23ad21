package shard_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv11ClaimWithoutPatchFailsVisibly: objects created with a member's
// assignment label and no trail (as before trails existed) are claimed by
// the member's gate with a patch. A member whose Role lacks patch on the
// sharded kind cannot claim: the refusal must be logged naming the claim,
// the verb and the resource, and the handlers must never run an object
// whose trail does not name the member (no admission without the claim).
func TestAdv11ClaimWithoutPatchFailsVisibly(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp().Config())
	applyRBAC(t, ns, func(r *rbacv1.Role) {
		if r.Name != "shard-member" {
			return
		}
		for i, rule := range r.Rules {
			if slices.Contains(rule.Resources, "configmaps") {
				r.Rules[i].Verbs = slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return v == "patch" })
			}
		}
	})
	ring := testRing(ns)
	var aAudit audit
	a := joinAs(t, aAudit.as(ns, "shard-member"), ring, "a")
	for i := range 5 {
		createCM(t, ns, fmt.Sprintf("cm-%d", i), a.ID())
	}
	want := `cannot patch resource "configmaps"`
	eventually(t, "a's refused claim logged", func() bool {
		for _, e := range a.log.AllEntries() {
			text := e.Message
			if err, ok := e.Data[logrus.ErrorKey].(error); ok {
				text += " " + err.Error()
			}
			if strings.Contains(text, want) && strings.Contains(text, "claim ConfigMap") {
				t.Logf("logged: %s", text)
				return true
			}
		}
		return false
	})
	aAudit.mu.Lock()
	refused := slices.ContainsFunc(aAudit.forbidden, func(r string) bool { return strings.HasPrefix(r, http.MethodPatch+" ") })
	aAudit.mu.Unlock()
	if !refused {
		t.Error("no PATCH of a was refused with 403")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.called) > 0 {
		t.Errorf("a's handler ran objects it could not claim: %v", a.called)
	}
}
