package controller

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestAdv3RestartStormNeverRunsAKeyTwiceAtOnce restarts a controller of
// four workers on three keys 30 times, each Start right after the run
// before was stopped (its passes still under way), while another
// goroutine enqueues the keys without pause and EnqueueAfter asks for
// delayed passes (issue 30, h30a: per-worker pass records, claims across
// every run still stopping, the lock-free cancel). No key is ever in two
// passes at once, and after the storm the last run still handles every
// key.
func TestAdv3RestartStormNeverRunsAKeyTwiceAtOnce(t *testing.T) {
	keys := []string{"k0", "k1", "k2"}
	var (
		inFlight [3]atomic.Int32
		overlaps atomic.Int32
		mu       sync.Mutex
		seen     = map[string]int{}
	)
	c := adv3ControllerOf(t, keys, &Options{}, func(key string) {
		var i int
		fmt.Sscanf(key, "ns/k%d", &i)
		if inFlight[i].Add(1) > 1 {
			overlaps.Add(1)
		}
		for range 50 {
			runtime.Gosched() // a pass long enough for restarts to land in it
		}
		inFlight[i].Add(-1)
		mu.Lock()
		seen[key]++
		mu.Unlock()
	})
	stopFeed := make(chan struct{})
	var feed sync.WaitGroup
	feed.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stopFeed:
				return
			default:
			}
			c.EnqueueKey("ns/" + keys[i%3])
			if i%7 == 0 {
				c.EnqueueAfter("ns", keys[(i+1)%3], time.Microsecond)
			}
			runtime.Gosched()
		}
	})
	cancel := func() {}
	for range 30 {
		cancel()
		var ctx context.Context
		ctx, cancel = context.WithCancel(t.Context())
		if err := c.Start(ctx, 4); err != nil {
			t.Fatal(err)
		}
		for range 200 {
			runtime.Gosched()
		}
	}
	close(stopFeed)
	feed.Wait()
	defer cancel()
	mu.Lock()
	clear(seen)
	mu.Unlock()
	for _, k := range keys {
		c.EnqueueKey("ns/" + k)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == len(keys) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the storm the last run handled %d of the %d keys enqueued", n, len(keys))
		}
		time.Sleep(time.Millisecond)
	}
	if n := overlaps.Load(); n > 0 {
		t.Fatalf("a key was in two passes at once %d times across the restarts", n)
	}
}
