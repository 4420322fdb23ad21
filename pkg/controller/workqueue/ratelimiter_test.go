package workqueue

import (
	"math"
	"testing"
	"time"
)

// inBounds reports whether d is a jittered form of want: within
// [want*(1-jitter), want], allowing for float rounding.
func inBounds(d, want time.Duration, jitter float64) bool {
	lo := time.Duration(float64(want)*(1-jitter)) - 1
	return d >= lo && d <= want
}

func TestJitterLimiterBacksOffExponentially(t *testing.T) {
	const (
		base   = time.Millisecond
		max    = time.Second
		jitter = 0.2
	)
	r := NewItemExponentialJitterRateLimiter[string](base, max, jitter)
	for n := range 40 {
		want := min(base<<n, max)
		if n >= 30 {
			want = max
		}
		d := r.When("a")
		if !inBounds(d, want, jitter) {
			t.Fatalf("failure %d: delay %v, want in [%v, %v]", n, d, time.Duration(float64(want)*(1-jitter)), want)
		}
		if got := r.NumRequeues("a"); got != n+1 {
			t.Fatalf("NumRequeues = %d, want %d", got, n+1)
		}
	}
	// Items are independent.
	if d := r.When("b"); !inBounds(d, base, jitter) {
		t.Fatalf("first failure of another item: %v, want about %v", d, base)
	}

	r.Forget("a")
	if got := r.NumRequeues("a"); got != 0 {
		t.Fatalf("NumRequeues after Forget = %d, want 0", got)
	}
	if d := r.When("a"); !inBounds(d, base, jitter) {
		t.Fatalf("first failure after Forget: %v, want about %v", d, base)
	}
	r.Forget("never-failed") // must not disturb others
	if got := r.NumRequeues("b"); got != 1 {
		t.Fatalf("NumRequeues(b) = %d, want 1", got)
	}
}

func TestJitterLimiterWithoutJitterIsExact(t *testing.T) {
	r := NewItemExponentialJitterRateLimiter[int](5*time.Millisecond, 40*time.Millisecond, 0)
	want := []time.Duration{5, 10, 20, 40, 40, 40}
	for i, w := range want {
		if d := r.When(1); d != w*time.Millisecond {
			t.Fatalf("failure %d: %v, want %v", i, d, w*time.Millisecond)
		}
	}
}

func TestJitterLimiterJitters(t *testing.T) {
	r := NewItemExponentialJitterRateLimiter[string](time.Second, time.Hour, 0.5)
	seen := map[time.Duration]bool{}
	for range 100 {
		d := r.When("a")
		if !inBounds(d, time.Second, 0.5) {
			t.Fatalf("delay %v out of [0.5s, 1s]", d)
		}
		seen[d] = true
		r.Forget("a")
	}
	if len(seen) < 10 {
		t.Fatalf("only %d distinct delays in 100 draws: no jitter", len(seen))
	}
}

func TestJitterLimiterNeverOverflows(t *testing.T) {
	for _, tc := range []struct {
		name      string
		base, max time.Duration
	}{
		{"huge max", time.Hour, time.Duration(math.MaxInt64)},
		{"huge base", time.Duration(math.MaxInt64 / 3), time.Duration(math.MaxInt64)},
		{"max below base", time.Second, time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewItemExponentialJitterRateLimiter[string](tc.base, tc.max, 0.1)
			for n := range 200 {
				d := r.When("a")
				if d < 0 || d > tc.max {
					t.Fatalf("failure %d: delay %v out of [0, %v]", n, d, tc.max)
				}
				if n > 70 && d < time.Duration(float64(tc.max)*0.9)-1 {
					t.Fatalf("failure %d: delay %v, want about the cap %v", n, d, tc.max)
				}
			}
		})
	}
}

func TestJitterLimiterClampsBadArguments(t *testing.T) {
	for _, tc := range []struct {
		name      string
		base, max time.Duration
		jitter    float64
		wantMax   time.Duration
	}{
		{"negative base", -time.Second, time.Second, 0.1, time.Second},
		{"negative max", time.Second, -time.Second, 0.1, 0},
		{"NaN jitter", time.Millisecond, time.Second, math.NaN(), time.Second},
		{"negative jitter", time.Millisecond, time.Second, -1, time.Second},
		{"jitter above 1", time.Millisecond, time.Second, 5, time.Second},
		{"infinite jitter", time.Millisecond, time.Second, math.Inf(1), time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewItemExponentialJitterRateLimiter[string](tc.base, tc.max, tc.jitter)
			for n := range 100 {
				if d := r.When("a"); d < 0 || d > tc.wantMax {
					t.Fatalf("failure %d: delay %v out of [0, %v]", n, d, tc.wantMax)
				}
			}
		})
	}
}

func TestDefaultRateLimiter(t *testing.T) {
	r := DefaultRateLimiter[string]()
	if d := r.When("a"); !inBounds(d, 5*time.Millisecond, 0.1) {
		t.Fatalf("first delay %v, want about 5ms", d)
	}
	var d time.Duration
	for range 1000 { // retries never stop
		d = r.When("a")
	}
	if !inBounds(d, 2*time.Minute, 0.1) {
		t.Fatalf("delay after many failures %v, want about 2m", d)
	}
	if got := r.NumRequeues("a"); got != 1001 {
		t.Fatalf("NumRequeues = %d, want 1001", got)
	}
}
