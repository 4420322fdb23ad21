package controller

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	lariatcache "github.com/lariat-dev/lariat/pkg/cache"
)

// RetryQuietly marks err as an expected, transient failure: the key is
// retried with backoff like after any error, but logged at debug level only.
// Use it for back-pressure (a full downstream queue), not for real failures.
func RetryQuietly(err error) error {
	if err == nil {
		return nil
	}
	return &quietError{err}
}

type quietError struct{ err error }

func (e *quietError) Error() string { return e.err.Error() }
func (e *quietError) Unwrap() error { return e.err }

// onlyRoutine reports whether every cause in err's tree is an API conflict,
// a read of a cache that has not synced yet while its informer runs (it
// lists on its own, and a kind that cannot list is logged by name by the
// cache factory), or marked with RetryQuietly, so that one handler's routine
// retry does not hide another's real error. It walks the tree itself:
// errors.As (and so apierrors.IsConflict) would find a routine cause
// anywhere in a joined error, even next to a real failure. A RetryQuietly mark covers all it
// wraps: the handler said so.
func onlyRoutine(err error) bool { return everyCause(err, routineCause) }

// routineCause decides onlyRoutine for err where it can without looking
// further down: a RetryQuietly mark or a NotSyncedError is decided where
// it is; a conflict only at a leaf.
func routineCause(err error) (yes, decided bool) {
	switch e := err.(type) {
	case *quietError:
		return true, true
	case *lariatcache.NotSyncedError:
		return !e.Stopped, true
	}
	if isLeaf(err) {
		return apierrors.IsConflict(err), true
	}
	return false, false
}

// everyCause reports whether every cause in err's tree satisfies cause,
// which decides for an error when it can and leaves the walk to go down
// through joined and wrapped errors when it cannot. errors.Is and
// errors.As cannot say this: they find one matching cause anywhere.
func everyCause(err error, cause func(error) (yes, decided bool)) bool {
	if yes, decided := cause(err); decided {
		return yes
	}
	switch e := err.(type) {
	case interface{ Unwrap() []error }:
		errs := e.Unwrap()
		for _, c := range errs {
			if !everyCause(c, cause) {
				return false
			}
		}
		return len(errs) > 0
	case interface{ Unwrap() error }:
		return everyCause(e.Unwrap(), cause)
	}
	return false
}

// isLeaf reports whether err wraps nothing.
func isLeaf(err error) bool {
	switch err.(type) {
	case interface{ Unwrap() []error }, interface{ Unwrap() error }:
		return false
	}
	return true
}

// QuietRetriesBeforeWarning is how many routine retries in a row (quiet,
// conflicts) a key takes before it is named at warning level, and again
// every as many retries after: a retry that never ends (a key a shard
// gate keeps for a term nothing ends) must not stay at debug level for
// ever. With the default backoff the first warning comes after about 13
// minutes of retries.
const QuietRetriesBeforeWarning = 20

// logRoutineRetry logs the n-th retry in a row of key for a routine err:
// at debug level, but at warning level on every QuietRetriesBeforeWarning-th
// one, naming the count and the cause.
func (c *controller) logRoutineRetry(key string, n int, err error) {
	log := c.log.WithField("key", key)
	if n%QuietRetriesBeforeWarning != 0 {
		log.Debugf("retrying: %v", err)
		return
	}
	log.WithField("retries", n).Warnf("still retrying after %d routine retries in a row: %v", n, err)
}
