package leader

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
)

// Proving the term fence enforced: a policy and a binding exactly as
// InstallTermPolicy writes them refuse nothing on an API server that does
// not run ValidatingAdmissionPolicies (the admission plugin
// ValidatingAdmissionPolicy left out by --disable-admission-plugins, or
// an --enable-admission-plugins list without it, on a hardened or managed
// control plane): the API is served, the objects install, and every stale
// create is admitted. Nothing the API server serves says which admission
// plugins run, so CheckTermPolicy asks what it would do: a dry-run create
// stamped with a term the Lease is never in must be refused by the term
// policy.

// termProbeID is the term ID the probe is stamped with: not 16 hex digits,
// so never a term's (newTermID), and so never the Lease's current term.
const termProbeID = "term-fence-probe"

// enforcementWait is how long CheckTermPolicy asks again while the API
// server admits the probe. A policy or binding installed moments ago is
// enforced only once the API server's own informers have it (usually
// within a second; longer on a loaded control plane): until then its
// admission is the same as an API server's without the plugin, and only
// time tells them apart.
const enforcementWait = time.Minute

// notEnforced is the TermPolicyError.Missing entry of an API server that
// admitted the probe.
const notEnforced = "enforcement by the API server (a dry-run create stamped with a term the Lease is not in was admitted: " +
	"its ValidatingAdmissionPolicy admission plugin is not enabled, see kube-apiserver's --enable-admission-plugins " +
	"and --disable-admission-plugins)"

// probeEnforced sends the probe, stamped with the TermLeaseLabel value
// stamp, through rc until the term policy refuses
// it, enforcementWait passed or ctx ended. It returns enforced true once
// refused; an error if the probe failed otherwise (it needs create on
// leases in namespace: a dry run, nothing is stored).
func probeEnforced(ctx context.Context, rc rest.Interface, namespace, stamp string) (enforced bool, err error) {
	if c, ok := rc.(*rest.RESTClient); rc == nil || ok && c == nil {
		return false, fmt.Errorf("leader: the client has no REST client to prove the term policy enforced with")
	}
	body, err := json.Marshal(map[string]any{
		"apiVersion": "coordination.k8s.io/v1",
		"kind":       "Lease",
		"metadata": map[string]any{
			"generateName": "term-fence-probe-",
			"labels":       map[string]string{TermLeaseLabel: stamp, TermIDLabel: termProbeID},
		},
	})
	if err != nil {
		return false, err
	}
	deadline := time.Now().Add(enforcementWait)
	backoff := 50 * time.Millisecond
	for admitted := false; ; admitted = true {
		// The Lease's namespace: the elector creates its Lease there, so
		// the operator's identity may create Leases there.
		err := rc.Post().AbsPath("/apis/coordination.k8s.io/v1/namespaces", namespace, "leases").
			Param("dryRun", "All").SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
		switch {
		case IsTermRefused(err):
			return true, nil
		case err != nil && admitted && ctx.Err() != nil:
			return false, nil // admitted until ctx ended: not enforced, as far as it could tell
		case err != nil:
			return false, fmt.Errorf("leader: prove the term policy enforced (a dry-run create of a Lease in %s, stamped with a term it is not in): %w",
				namespace, err)
		case !time.Now().Before(deadline):
			return false, nil
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, nil // admitted until ctx ended
		case <-t.C:
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}
