package kvscheduler_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lariat-dev/lariat/pkg/kvscheduler"
	"github.com/lariat-dev/lariat/pkg/kvscheduler/kvtest"
)

// TestConcurrentUse commits from several goroutines while others read
// statuses, value dumps, metadata and history and watch; run with -race.
func TestConcurrentUse(t *testing.T) {
	s := newSched(t, kvscheduler.Options{HistoryMaxCount: 10})
	sb := kvtest.New()
	register(t, s, withDeps(sb.Descriptor("a", "a/")))
	ctx, cancel := context.WithCancel(context.Background())
	w := s.WatchValueStatus(ctx, nil)
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		for range w.C() {
		}
	}()
	go func() {
		defer readers.Done()
		mm, _ := s.MetadataMap("a")
		for ctx.Err() == nil {
			s.GetValueStatus("a/0/0")
			s.ValueStatuses(nil)
			s.TransactionHistory(time.Time{}, time.Time{})
			s.DumpValues("a", "a/1", kvscheduler.NBView)
			s.DumpValues("", "", kvscheduler.SBView)
			s.DumpValues("", "", kvscheduler.CachedView)
			mm.Labels()
			time.Sleep(100 * time.Microsecond)
		}
	}()
	var writers sync.WaitGroup
	for g := 0; g < 6; g++ {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := 0; i < 20; i++ {
				k := fmt.Sprintf("a/%d/%d", g, i)
				dep := ""
				if i > 0 {
					dep = fmt.Sprintf("a/%d/%d", g, i-1)
				}
				txn := s.StartNBTransaction().SetValue(k, "v|"+dep)
				if i%3 == 0 {
					txn.NonBlocking()
				}
				if _, err := txn.Commit(context.Background()); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	writers.Wait()
	barrier(t, s)
	cancel()
	readers.Wait()
	if n := len(sb.Values()); n != 120 {
		t.Fatalf("%d values in the southbound", n)
	}
	if h := s.TransactionHistory(time.Time{}, time.Time{}); len(h) != 10 {
		t.Fatalf("history of %d", len(h))
	}
}
