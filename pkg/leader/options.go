package leader

import (
	"fmt"
	"maps"
	"time"

	"github.com/sirupsen/logrus"
	admissionv1client "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	"k8s.io/client-go/tools/leaderelection"
)

// The defaults are client-go's and controller-runtime's usual ones: a
// standby takes over at most about 15 s after a leader vanishes without
// releasing its lease, a leader survives about 10 s of API server trouble,
// and a lease costs one write every 2 s.
const (
	// DefaultLeaseDuration is how long candidates wait, after they last saw
	// the lease change, before they take it.
	DefaultLeaseDuration = 15 * time.Second
	// DefaultRenewDeadline is how long after its last successful renewal
	// was sent a leader stops its work.
	DefaultRenewDeadline = 10 * time.Second
	// DefaultRetryPeriod is the time between two renewals, and between two
	// attempts of a candidate.
	DefaultRetryPeriod = 2 * time.Second
)

// An Option changes one of New's defaults.
type Option func(*options)

type options struct {
	leaseDuration, renewDeadline, retryPeriod time.Duration
	identity                                  string
	log                                       logrus.FieldLogger
	labels                                    map[string]string
	releaseLabels                             map[string]string
	group                                     string
	admission                                 admissionv1client.AdmissionregistrationV1Interface
}

// WithLeaseDuration sets the lease duration (DefaultLeaseDuration): the
// longest a standby waits for a leader that vanished without releasing.
// It must be a whole number of seconds, longer than the renew deadline.
func WithLeaseDuration(d time.Duration) Option {
	return func(o *options) { o.leaseDuration = d }
}

// WithRenewDeadline sets the renew deadline (DefaultRenewDeadline): how
// long a leader that cannot renew goes on working. Shorter than the lease
// duration; the difference is the safety margin (see the package
// documentation).
func WithRenewDeadline(d time.Duration) Option {
	return func(o *options) { o.renewDeadline = d }
}

// WithRetryPeriod sets the retry period (DefaultRetryPeriod); the renew
// deadline must exceed 1.2 of it, so that a leader gets more than one try.
func WithRetryPeriod(d time.Duration) Option {
	return func(o *options) { o.retryPeriod = d }
}

// WithIdentity sets the identity written into the lease as its holder;
// the default is DefaultIdentity(). Two candidates must never share one.
func WithIdentity(id string) Option {
	return func(o *options) { o.identity = id }
}

// WithLogger sets where leadership changes are logged (the default is
// logrus' standard logger).
func WithLogger(log logrus.FieldLogger) Option {
	return func(o *options) { o.log = log }
}

// WithLabels sets labels on the Lease, written with every acquisition and
// renewal (added to the Lease's own, never removed), so that Leases of one
// purpose can be listed by selector: package shard labels its member
// Leases with their ring.
func WithLabels(labels map[string]string) Option {
	return func(o *options) { o.labels = maps.Clone(labels) }
}

// WithReleaseLabels sets labels written on the Lease with its release
// only: acquisitions and renewals write them empty, so that a value an
// earlier term's release left is not on the Lease this Elector holds, and
// whoever watches the Lease can tell the holder's own release from an
// edit of the same shape. Package shard writes there the secret whose
// hash a member's ID carries, which only that member knows until it has
// released. Another Elector of the same Lease without these labels leaves
// them as a release wrote them: compare the value with what the holder's
// release would write, not its presence.
func WithReleaseLabels(labels map[string]string) Option {
	return func(o *options) { o.releaseLabels = maps.Clone(labels) }
}

// WithTermGroup makes the Lease one of a group of Leases named group
// (in the Lease's namespace), each held for one term (RunTerm), whose
// creates one binding judges (TermGroupBinding): creates are stamped with
// TermGroupLabelValue(namespace, group) in place of the Lease's own
// value, and the Lease carries TermGroupLabel with that value, by which
// the binding takes every Lease of the group as a parameter. The term
// policy judges a group's create only by the Lease in the create's term,
// the one whose TermIDLabel is the create's: so a Lease of a group must
// never be in a second term (Run refuses a group; RunTerm holds one term).
func WithTermGroup(group string) Option {
	return func(o *options) { o.group = group }
}

// WithTermPolicyCheck makes Run check, when it starts, that the policy
// refusing creates of ended terms is installed for the Lease
// (CheckTermPolicy), and log a warning naming what is missing. c needs get
// on validatingadmissionpolicies and validatingadmissionpolicybindings,
// and create on leases in the Lease's namespace (a dry run, to prove the
// API server enforces the policy). The check runs beside the campaign,
// which it does not delay; Run returns once it did.
func WithTermPolicyCheck(c admissionv1client.AdmissionregistrationV1Interface) Option {
	return func(o *options) { o.admission = c }
}

// resolve applies opts to the defaults and checks the timing rules.
func resolve(opts []Option) (options, error) {
	o := options{leaseDuration: DefaultLeaseDuration, renewDeadline: DefaultRenewDeadline, retryPeriod: DefaultRetryPeriod}
	for _, opt := range opts {
		opt(&o)
	}
	if o.log == nil {
		o.log = logrus.StandardLogger()
	}
	if o.identity == "" {
		id, err := DefaultIdentity()
		if err != nil {
			return o, err
		}
		o.identity = id
	}
	switch {
	case o.retryPeriod <= 0:
		return o, fmt.Errorf("leader: retry period %v is not positive", o.retryPeriod)
	case o.leaseDuration < time.Second || o.leaseDuration%time.Second != 0:
		return o, fmt.Errorf("leader: lease duration %v is not a whole number of seconds (a Lease stores whole seconds)", o.leaseDuration)
	case o.renewDeadline >= o.leaseDuration:
		return o, fmt.Errorf("leader: renew deadline %v is not shorter than the lease duration %v: the old leader could still write after another took over", o.renewDeadline, o.leaseDuration)
	case float64(o.renewDeadline) <= leaderelection.JitterFactor*float64(o.retryPeriod):
		return o, fmt.Errorf("leader: renew deadline %v is not longer than %v times the retry period %v", o.renewDeadline, leaderelection.JitterFactor, o.retryPeriod)
	}
	return o, nil
}
