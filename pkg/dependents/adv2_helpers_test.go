package dependents_test

import (
	"os"
	"testing"
)

// Helpers of the second round of adversarial tests (adv2_*_test.go): each
// proves a defect; those still open call advOpen and are skipped unless
// LARIAT_OPEN_DEFECTS=1, so the suite stays green until they are fixed.

// advOpen skips the test unless LARIAT_OPEN_DEFECTS is set, naming what it
// proves.
func advOpen(t *testing.T, proves string) {
	t.Helper()
	if os.Getenv("LARIAT_OPEN_DEFECTS") == "" {
		t.Skipf("open defect (LARIAT_OPEN_DEFECTS=1 checks it): %s", proves)
	}
}
