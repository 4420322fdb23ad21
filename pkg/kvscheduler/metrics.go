package kvscheduler

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are per scheduler; a nil *metrics records nothing.
type metrics struct {
	txns     *prometheus.CounterVec
	ops      *prometheus.CounterVec
	duration prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer, name string) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	cl := prometheus.Labels{"scheduler": name}
	m := &metrics{
		txns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lariat_kvscheduler_transactions_total",
			Help: "Processed transactions by type.", ConstLabels: cl}, []string{"type"}),
		ops: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lariat_kvscheduler_operations_total",
			Help: "Executed operations by operation and result.", ConstLabels: cl}, []string{"operation", "result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "lariat_kvscheduler_transaction_duration_seconds",
			Help: "Duration of transaction processing.", ConstLabels: cl, Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.txns, m.ops, m.duration} {
		errs = append(errs, reg.Register(c))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *metrics) txn(r *TxnRecord) {
	if m == nil {
		return
	}
	m.txns.WithLabelValues(r.Type.String()).Inc()
	m.duration.Observe(r.Stop.Sub(r.Start).Seconds())
	for _, op := range r.Executed {
		res := "ok"
		if op.Err != nil {
			res = "error"
		}
		m.ops.WithLabelValues(op.Operation.String(), res).Inc()
	}
}
