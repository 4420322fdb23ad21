package generic_test

import (
	"os"
	"testing"
)

// openDefect skips a test that proves a known defect not fixed yet (each
// is listed in docs/safety.md, "Not yet guaranteed"), unless the
// environment sets LARIAT_OPEN_DEFECTS: the test stays in the repository,
// failing on the current code, for whoever fixes the defect to run.
func openDefect(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("LARIAT_OPEN_DEFECTS") == "" {
		t.Skipf("open defect: %s (docs/safety.md, Not yet guaranteed); LARIAT_OPEN_DEFECTS=1 runs it", what)
	}
}
