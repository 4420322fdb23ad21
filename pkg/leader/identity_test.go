package leader_test

import (
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/leader"
)

// TestDefaultIdentity: the pod's name comes first, and two processes with
// one pod name (or host name) still differ.
func TestDefaultIdentity(t *testing.T) {
	t.Setenv(leader.PodNameEnv, "webapp-7d9f-abcde")
	a, err := leader.DefaultIdentity()
	if err != nil {
		t.Fatal(err)
	}
	b, err := leader.DefaultIdentity()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a, "webapp-7d9f-abcde_") || !strings.HasPrefix(b, "webapp-7d9f-abcde_") || a == b {
		t.Errorf("identities %q and %q: want the pod name, then distinct suffixes", a, b)
	}
}
