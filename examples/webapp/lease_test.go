package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The Lease is where --lease-namespace says; else, in a cluster, in the
// pod's own namespace (from its service account's namespace file); else in
// the operator's --namespace; else in default.
func TestLeaseNamespace(t *testing.T) {
	inPod := filepath.Join(t.TempDir(), "namespace")
	if err := os.WriteFile(inPod, []byte("webapp-system\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	notInPod := filepath.Join(t.TempDir(), "namespace")
	for _, c := range []struct {
		o    options
		want string
	}{
		{options{leaseNamespace: "leases", namespace: "apps", serviceAccountNamespaceFile: inPod}, "leases"},
		{options{namespace: "apps", serviceAccountNamespaceFile: inPod}, "webapp-system"},
		{options{namespace: "apps", serviceAccountNamespaceFile: notInPod}, "apps"},
		{options{namespace: "apps"}, "apps"},
		{options{serviceAccountNamespaceFile: notInPod}, "default"},
	} {
		if got, err := leaseNamespace(c.o); err != nil || got != c.want {
			t.Errorf("%+v: Lease namespace %q (%v), want %q", c.o, got, err, c.want)
		}
	}
}
