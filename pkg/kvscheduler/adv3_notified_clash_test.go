package kvscheduler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// Rule 8 (docs/kvscheduler.md) lists the clashes that make a base
// INVALID: a key it derives twice, one the northbound requests, one
// another wanted base derives, one it derives from. A key the southbound
// notified (OBTAINED, nobody requested it) is none of them, yet a base
// deriving it is refused as INVALID with an error saying the northbound
// requests the key: the northbound never did, so the error sends the
// operator after a request that does not exist.

func TestAdv3NotifiedKeyIsNotANorthboundRequest(t *testing.T) {
	ctx := context.Background()
	sb := kvtest.New()
	s := newSched(t, kvscheduler.Options{})
	b, d := advBaseDerived(sb)
	register(t, s, b, d)
	sb.Set("d/2", "z", true)
	if err := s.PushSBNotification("d/2", "z", nil); err != nil {
		t.Fatal(err)
	}
	barrier(t, s)
	wantState(t, s, "d/2", kvscheduler.Obtained)
	_, err := s.StartNBTransaction().SetValue("b/2", "v").Commit(ctx)
	if err != nil && strings.Contains(err.Error(), "northbound requests") {
		t.Fatalf("the northbound never requested d/2 (the southbound notified it, %s), yet Commit says: %v", advState(s, "d/2"), err)
	}
}
