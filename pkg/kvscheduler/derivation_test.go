package kvscheduler_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// A key is one value: the northbound requesting a key a wanted base
// derives is refused (the reverse order of
// TestAdvRequestedKeyIsNotDeletedWithABaseDerivingIt). Before, the
// request took the derived value over silently (an update of it), and the
// base's delete then deleted it while the northbound still requested it.
func TestRequestOfADerivedKeyIsRefused(t *testing.T) {
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	b := sb.Descriptor("b", "b/")
	b.DerivedValues = func(key string, v any) []kvscheduler.KeyValuePair {
		return []kvscheduler.KeyValuePair{{Key: "d/" + strings.TrimPrefix(key, "b/"), Value: v}}
	}
	register(t, s, b, sb.Descriptor("d", "d/"))
	mustSet(t, s, "b/1", "v")
	sb.ResetOps()

	err := set(t, s, "d/1", "nb")
	var terr *kvscheduler.TransactionError
	if !errors.As(err, &terr) || len(terr.Failed) != 1 || terr.Failed[0].Key != "d/1" || !strings.Contains(err.Error(), "b/1") {
		t.Fatalf("requesting d/1, which b/1 derives: error %v, want a failure of d/1 naming b/1", err)
	}
	wantOps(t, sb)
	wantSB(t, sb, map[string]any{"b/1": "v", "d/1": "v"})
	if st := s.GetValueStatus("d/1"); st.State != kvscheduler.Configured || st.BaseKey != "b/1" {
		t.Errorf("d/1 after the refused request: %s, base %q; want CONFIGURED, derived from b/1", st.State, st.BaseKey)
	}

	// Once nothing derives it, the northbound may request it.
	mustSet(t, s, "b/1", nil)
	wantOps(t, sb, "delete d/1", "delete b/1")
	mustSet(t, s, "d/1", "nb")
	wantOps(t, sb, "create d/1")
	wantSB(t, sb, map[string]any{"d/1": "nb"})
}
