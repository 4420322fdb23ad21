package kvscheduler_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestAdv18DerivedValueOfABaseBackInPendingFollowsItsRequest (adv5 fuzz
// seed 2111819 of -fzretry -fzdd -fzprops -fzview -fzinv -fzrb -fzorder
// -fzdheld -fzrec -fzcancel, reduced; the fuzz's settle check: "settled:
// d/2 held (PENDING) with unmet a/3"): a/3 = v|b/1 and b/1 = v@1|a/3
// (deriving d/1 = dv-v@1|a/3, which Requires a/3) are a cycle, created
// together; a/3's create fails, so b/1 goes back into PENDING. Its
// derived d/1 stays in the graph, PENDING, Requiring a/3 (when b/1 goes
// into PENDING by the cascade of a/3's delete instead, d/1 is dropped,
// NONEXISTENT). b/1 is then requested as w@1|~b/2, which derives d/1 =
// dv-w@1|~b/2 (ordered after b/2, nothing Required), and a full resync
// requests it again: d/1 must not be reported with the dependencies of a
// value nothing derives any more. It was: PENDING, Requiring a/3, the old
// value's, after both. In the fuzz, a value the southbound held under
// d/2 was then reported PENDING with that stale unmet dependency. The
// cause: d/1's frame, pushed by b/1's create, ran after a/3's failure
// had taken b/1 back into PENDING; a derived frame of a base no longer
// held now deletes instead.
func TestAdv18DerivedValueOfABaseBackInPendingFollowsItsRequest(t *testing.T) {
	withFzFlags(t, fzDerivedDeps)
	s := newSched(t, kvscheduler.Options{})
	sb := kvtest.New()
	register(t, s, fzDescs(sb, &fzCancel{})...)
	_ = set(t, s, "a/3", "v|b/1")
	sb.FailNext("create", "a/3", errors.New("injected"))
	if err := set(t, s, "b/1", "v@1|a/3"); err == nil {
		t.Fatal("a/3's create failed, Commit returned nil")
	}
	wantState(t, s, "b/1", kvscheduler.Pending)
	err := set(t, s, "b/1", "w@1|~b/2")
	_, err2 := s.StartNBTransaction().WithResync(kvscheduler.FullResync).
		SetValue("a/3", "v|b/1").SetValue("b/1", "w@1|~b/2").Commit(context.Background())
	wantState(t, s, "b/1", kvscheduler.Pending) // ordered after b/2, which nothing provides
	st := s.GetValueStatus("d/1")
	for _, dep := range st.Dependencies {
		if dep.Key == "a/3" {
			t.Errorf("b/1 is requested as w@1|~b/2 (deriving d/1 = dv-w@1|~b/2, which Requires nothing), yet d/1 is reported %s Requiring a/3, as the old value v@1|a/3 derived it (dependencies %+v; commits %v, %v)",
				st.State, st.Dependencies, err, err2)
		}
	}
	advWantAgree(t, s, sb, "after the resync", "a/", "b/", "d/")
}

// TestAdv18PublishedStatusOfADerivedValueWhoseDeleteIsRefusedAgain is
// TestAdv18PublishedStatusOfARefusedDerivedDeleteSeed2027659 reduced:
// b/1 = w@1| derives d/1, which r/2 = w|d/1 Requires; the southbound
// holds b/2 = w@1| of its own (it would derive d/1 too). b/1's delete
// is refused (r/2's delete fails, so d/1's is refused), and a downstream
// resync that cannot read r/ drops b/1 and leaves d/1, FAILED with the
// refusal, under b/2 (OBTAINED). The northbound then takes b/2 over as
// w| (deriving nothing): d/1 becomes the northbound's again (its origin
// changes), and its failed delete, the same request, is left as it is
// (waiting for r/2; not attempted again, so not in the record, and Commit
// returns nil). Its status now shows its last operation, DELETE (a value
// of the southbound's shows NONE), but it was not published again: what
// GetValueStatus and watchers read still said NONE. Every job's
// published statuses must be what the nodes say (CheckPublished, as the
// adv5 fuzz checks after every job); with b/2 re-created (descriptor
// UpdateWithRecreate) it is the same.
func TestAdv18PublishedStatusOfADerivedValueWhoseDeleteIsRefusedAgain(t *testing.T) {
	s := newSched(t, kvscheduler.Options{})
	var mu sync.Mutex
	var pubErr error
	kvscheduler.AfterJob(s, func() {
		if err := kvscheduler.CheckPublished(s); err != nil {
			mu.Lock()
			if pubErr == nil {
				pubErr = err
			}
			mu.Unlock()
		}
	})
	sb := kvtest.New()
	register(t, s, adv18Descs(sb, false)...)
	mustSet(t, s, "b/1", "w@1|", "r/2", "w|d/1")
	sb.Set("b/2", "w@1|", true)
	sb.FailNext("delete", "r/2", errors.New("injected"))
	if err := set(t, s, "b/1", nil); err == nil {
		t.Fatal("r/2's delete failed, Commit returned nil")
	}
	sb.FailNext("retrieve", "r", errors.New("injected read"))
	if _, err := s.StartNBTransaction().WithResync(kvscheduler.DownstreamResync).Commit(context.Background()); err == nil {
		t.Fatal("the read of r failed, the resync's Commit returned nil")
	}
	if st := s.GetValueStatus("d/1"); st.State != kvscheduler.Failed || st.BaseKey != "b/2" {
		t.Fatalf("setup: d/1 %s (base %q), want FAILED under b/2", advState(s, "d/1"), st.BaseKey)
	}
	mu.Lock()
	setupErr := pubErr
	mu.Unlock()
	if setupErr != nil {
		t.Fatalf("setup: %v", setupErr)
	}
	err := set(t, s, "b/2", "w|")
	mu.Lock()
	defer mu.Unlock()
	if pubErr != nil {
		t.Errorf("after b/2's takeover (Commit %v, ops %v): %v", err, sb.OpStrings(), pubErr)
	}
}
