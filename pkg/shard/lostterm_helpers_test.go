package shard_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// Helpers of the tests of a member's lost term (adv7_lostterm_*,
// adv8_lostterm_*, adv8_partition_*, adv9_*, carried_history): the member
// holds an object, its Lease connection is cut (leaseProx.Cut) so that its
// term ends, and what the next term's handlers are told is checked.

// createHandled creates the ConfigMap ns/name assigned to r and waits
// until r's handlers saw it; it returns the object's key.
func (r *member) createHandled(t *testing.T, ns, name string) string {
	t.Helper()
	key := ns + "/" + name
	createCM(t, ns, name, r.id())
	eventually(t, r.name+" handling "+key, func() bool { return len(r.callsFor(key)) > 0 })
	return key
}

// termEnded waits until r's term ended, once its Lease connection is cut.
func (r *member) termEnded(t *testing.T) {
	t.Helper()
	eventually(t, r.name+"'s term ending without its Lease", func() bool { return !r.running.Load() })
}

// nextTerm gives r its Lease connection back and waits until its second
// term runs.
func (r *member) nextTerm(t *testing.T) {
	t.Helper()
	r.leaseProx.Restore()
	eventually(t, r.name+" running its next term", func() bool { return r.terms.Load() == 2 && r.running.Load() })
}

// waitHeld waits until a pass holdPasses or holdAbsentPasses holds has
// begun; what names it in the failure.
func waitHeld(t *testing.T, held <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-held:
	case <-time.After(timeout):
		t.Fatal("no pass of " + what)
	}
}

// deleteCM deletes the ConfigMap ns/name as a user would.
func deleteCM(t *testing.T, ns, name string) {
	t.Helper()
	if err := controlplanetest.Clientset(cp().Config()).CoreV1().ConfigMaps(ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}
