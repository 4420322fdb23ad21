package generic_test

import (
	"os"
	"testing"
)

// Helpers of the third round of adversarial tests (adv3_*_test.go, issue
// 30: the compact and metadata-only caches): those still open call
// adv3Open and are skipped unless LARIAT_OPEN_DEFECTS=1, so the suite stays
// green until they are fixed.

// adv3Open skips the test unless LARIAT_OPEN_DEFECTS is set, naming what
// it proves.
func adv3Open(t *testing.T, proves string) {
	t.Helper()
	if os.Getenv("LARIAT_OPEN_DEFECTS") == "" {
		t.Skipf("open defect (LARIAT_OPEN_DEFECTS=1 checks it): %s", proves)
	}
}
