package dashboard

import (
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// observed returns the histogram, with bounds, of values.
func observed(t *testing.T, bounds []float64, values ...float64) *dto.Histogram {
	t.Helper()
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "h", Buckets: bounds})
	for _, v := range values {
		h.Observe(v)
	}
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram()
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestPercentilesFromKnownHistograms: the percentiles are read off the
// buckets as histogram_quantile reads them, for inputs whose answer is
// known: ranks that end at a bucket's bound, ranks inside a bucket
// (linear interpolation), histograms of two handlers summed, bounds that
// differ between them, values beyond the last bound, and nothing at all.
func TestPercentilesFromKnownHistograms(t *testing.T) {
	bounds := []float64{1, 2, 4, 8}
	var values []float64
	values = append(values, repeat(0.5, 50)...) // ≤1: 50
	values = append(values, repeat(1.5, 40)...) // ≤2: 90
	values = append(values, repeat(3, 9)...)    // ≤4: 99
	values = append(values, 6)                  // ≤8: 100
	cases := []struct {
		name string
		hs   []*dto.Histogram
		want Percentiles
	}{
		{"ranks at bounds", []*dto.Histogram{observed(t, bounds, values...)}, Percentiles{P50: 1, P90: 2, P99: 4}},
		// 100 values in (1,2]: the 50th is halfway, the 90th 9/10 of the way.
		{"inside a bucket", []*dto.Histogram{observed(t, bounds, repeat(1.5, 100)...)}, Percentiles{P50: 1.5, P90: 1.9, P99: 1.99}},
		// Two handlers of one kind: 50 fast ones and 50 in (4,8].
		{"two handlers summed", []*dto.Histogram{observed(t, bounds, repeat(0.5, 50)...), observed(t, bounds, repeat(5, 50)...)},
			Percentiles{P50: 1, P90: 4 + 4*0.8, P99: 4 + 4*0.98}},
		// One histogram without the bound 2: its 10 values in (1,4] count
		// at 4, never lower.
		{"bounds that differ", []*dto.Histogram{observed(t, []float64{1, 2, 4}, repeat(0.5, 90)...), observed(t, []float64{1, 4}, repeat(1.5, 10)...)},
			Percentiles{P50: 0.5 / 0.9, P90: 1, P99: 2 + 2*0.9}},
		{"beyond the last bound", []*dto.Histogram{observed(t, bounds, append(repeat(0.5, 95), repeat(100, 5)...)...)},
			Percentiles{P50: 0.5 / 0.95, P90: 0.9 / 0.95, P99: 8, Above: true}},
		{"nothing observed", []*dto.Histogram{observed(t, bounds)}, Percentiles{}},
	}
	for _, c := range cases {
		var h histogram
		for _, p := range c.hs {
			h.add(p)
		}
		got := h.percentiles()
		if !near(got.P50, c.want.P50) || !near(got.P90, c.want.P90) || !near(got.P99, c.want.P99) || got.Above != c.want.Above {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
