package panicvalue

import (
	"strings"
	"testing"
)

// bomb's String panics with another bomb, so fmt's own recover of the
// first panic panics again while printing it.
type bomb struct{}

func (bomb) String() string { panic(bomb{}) }

func TestStringOfAValueWhoseStringPanicsAgainNamesItsType(t *testing.T) {
	if got := String(bomb{}); !strings.Contains(got, "panicvalue.bomb") {
		t.Fatalf("String(bomb{}) = %q, want it to name the type", got)
	}
	if got := String("plain"); got != "plain" {
		t.Fatalf("String(%q) = %q", "plain", got)
	}
}
