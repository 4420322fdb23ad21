package dashboard

import (
	"math"
	"slices"

	dto "github.com/prometheus/client_model/go"
)

// Percentiles are the 50th, 90th and 99th percentiles of a duration in
// seconds, estimated from a histogram's buckets. Zero when nothing was
// observed.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	// Above says that a percentile lies above the histogram's last finite
	// bucket, which is then all that is known of it (it is shown as
	// "> bound").
	Above bool `json:"above,omitempty"`
}

// histogram is the sum of a kind's histograms (one per handler): the
// cumulative count at each upper bound, and the number of observations.
// It is what the operator's metrics hold already, so the view costs no
// memory per observation and stays bounded by the number of buckets.
type histogram struct {
	bounds []float64 // finite upper bounds, ascending
	cum    []float64 // observations at or below each bound
	count  float64   // all observations, the +Inf bucket's included
}

// add adds a Prometheus histogram. Histograms of one metric share their
// bounds; when they do not, each bound of the union gets the count at the
// added histogram's largest bound below it, which never counts an
// observation as smaller than it was (the percentiles err upwards).
func (h *histogram) add(p *dto.Histogram) {
	var bounds, cum []float64
	for _, b := range p.GetBucket() {
		if math.IsInf(b.GetUpperBound(), +1) {
			continue
		}
		bounds = append(bounds, b.GetUpperBound())
		cum = append(cum, float64(b.GetCumulativeCount()))
	}
	at := func(bs, cs []float64, bound float64) float64 {
		i, found := slices.BinarySearch(bs, bound)
		if found {
			return cs[i]
		}
		if i == 0 {
			return 0
		}
		return cs[i-1]
	}
	union := slices.Sorted(slices.Values(append(slices.Clone(h.bounds), bounds...)))
	union = slices.Compact(union)
	merged := make([]float64, len(union))
	for i, b := range union {
		merged[i] = at(h.bounds, h.cum, b) + at(bounds, cum, b)
	}
	h.bounds, h.cum = union, merged
	h.count += float64(p.GetSampleCount())
}

// percentiles estimates the 50th, 90th and 99th percentiles as PromQL's
// histogram_quantile does: the bucket that holds the rank is found, and
// the value interpolated linearly within it (from 0 for the first bucket).
func (h *histogram) percentiles() Percentiles {
	var p Percentiles
	p.P50, p.Above = h.quantile(0.5, p.Above)
	p.P90, p.Above = h.quantile(0.9, p.Above)
	p.P99, p.Above = h.quantile(0.99, p.Above)
	return p
}

// quantile returns the q-quantile, and above (or-ed with the one given)
// when it lies beyond the last finite bound.
func (h *histogram) quantile(q float64, above bool) (float64, bool) {
	if h.count == 0 || len(h.bounds) == 0 {
		return 0, above
	}
	rank := q * h.count
	i, _ := slices.BinarySearchFunc(h.cum, rank, func(c, r float64) int {
		switch {
		case c < r:
			return -1
		case c > r:
			return 1
		}
		return 0
	})
	if i == len(h.bounds) {
		return h.bounds[len(h.bounds)-1], true
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = h.bounds[i-1], h.cum[i-1]
	}
	in := h.cum[i] - below
	if in <= 0 {
		return h.bounds[i], above
	}
	return lower + (h.bounds[i]-lower)*(rank-below)/in, above
}
