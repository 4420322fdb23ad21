package controller

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/sirupsen/logrus"
)

// ErrPermanent, wrapped in a handler's error (with Permanent, or
// fmt.Errorf("...: %w", ErrPermanent)), means the handler cannot succeed for
// the object as it is (an invalid spec, say): retrying would fail the same
// way. The key is not retried; it is handled again when something new
// arrives for it (a watch event of the object's next version, an Enqueue
// such as a related resource's, a resync). The failure is logged once at
// error level, and again only when its message changes or after a pass
// that did not fail permanently. Status and generating handlers
// (pkg/generic) still set their condition False with the message.
//
// A permanent error joined with another error (of another handler of the
// kind, or the conflict of a status write) is retried as that one is (an
// API conflict quietly): only an error whose every cause is permanent
// stops the retries.
var ErrPermanent = errors.New("permanent failure")

// Permanent marks err as permanent (see ErrPermanent); nil stays nil. Its
// message is err's, so a condition set from it reads as err does.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string        { return e.err.Error() }
func (e *permanentError) Unwrap() error        { return e.err }
func (e *permanentError) Is(target error) bool { return target == ErrPermanent }

// onlyPermanent reports whether every cause in err's tree is permanent:
// marked by Permanent, or wrapping ErrPermanent. errors.Is alone is not
// enough: it finds ErrPermanent anywhere in a joined error, next to an
// ordinary failure that is to be retried.
func onlyPermanent(err error) bool { return everyCause(err, permanentCause) }

// permanentCause decides onlyPermanent for err where it is marked; an
// unmarked leaf is not permanent.
func permanentCause(err error) (yes, decided bool) {
	if err == ErrPermanent {
		return true, true
	}
	if is, ok := err.(interface{ Is(error) bool }); ok && is.Is(ErrPermanent) {
		return true, true
	}
	return false, isLeaf(err)
}

// routineOrPermanent reports whether every cause in err's tree is routine
// (see onlyRoutine) or permanent: a permanent failure next to a conflict
// (its condition's status write raced another writer) is retried quietly,
// since the condition is not written yet; the retry fails permanently
// alone and is logged then.
func routineOrPermanent(err error) bool {
	return everyCause(err, func(err error) (yes, decided bool) {
		if yes, decided := routineCause(err); decided && yes {
			return true, true
		}
		if yes, decided := permanentCause(err); decided && yes {
			return true, true
		}
		return false, isLeaf(err)
	})
}

// permanentFailures remembers, per key, the message of the permanent
// failure last logged, so that each is logged once: the pass that follows
// the status write of the failure (and any later event of an object that is
// still wrong the same way) logs at debug level only.
type permanentFailures struct {
	// tracked is len(logged), read without the lock so that the common
	// case, no key failing permanently, costs one atomic load per pass.
	tracked atomic.Int64
	mu      sync.Mutex
	logged  map[string]string
}

// failed logs key's permanent failure err, at error level unless the same
// message was the key's last.
func (p *permanentFailures) failed(key string, err error, log logrus.FieldLogger) {
	msg := err.Error()
	p.mu.Lock()
	if p.logged == nil {
		p.logged = map[string]string{}
	}
	last, seen := p.logged[key]
	if !seen {
		p.tracked.Add(1)
	}
	p.logged[key] = msg
	p.mu.Unlock()
	if seen && last == msg {
		log.WithField("key", key).Debugf("handler failed permanently again, not retried: %v", err)
		return
	}
	log.WithField("key", key).Errorf("handler failed permanently, not retried until something changes: %v", err)
}

// passed forgets key's logged failure after a pass that did not fail
// permanently (it succeeded, failed otherwise, or saw the object gone).
func (p *permanentFailures) passed(key string, err error) {
	if p.tracked.Load() == 0 || (err != nil && onlyPermanent(err)) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.logged[key]; ok {
		delete(p.logged, key)
		p.tracked.Add(-1)
	}
}
