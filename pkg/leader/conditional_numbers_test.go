package leader

import (
	"strings"
	"testing"
)

// TestPreconditionKeepsLargeIntegers: adding a precondition re-encodes the
// body, and every number in it must come out as it went in. An integer
// above 2^53 (a CR's int64 field, a big quantity in bytes) decoded as a
// float64 would be written back rounded: a field the handler never meant
// to touch, overwritten.
func TestPreconditionKeepsLargeIntegers(t *testing.T) {
	const big = "9007199254740993" // 2^53 + 1: not a float64
	for name, out := range map[string][]byte{
		"update":     objectPrecondition([]byte(`{"spec":{"size":`+big+`}}`), "7", isVersion),
		"JSON patch": jsonPatchPrecondition([]byte(`[{"op":"replace","path":"/spec/size","value":`+big+`}]`), "7"),
		"delete":     deletePrecondition([]byte(`{"gracePeriodSeconds":`+big+`}`), "7"),
	} {
		if !strings.Contains(string(out), big) || !strings.Contains(string(out), `"7"`) {
			t.Errorf("%s: the body went out as %s, want %s kept and the precondition added", name, out, big)
		}
	}
}
