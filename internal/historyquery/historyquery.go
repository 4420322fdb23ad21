// Package historyquery parses the query parameters that select records of
// Lariat's introspection histories (the event loop's event history, the
// KV scheduler's transaction history), so that both endpoints accept the
// same parameters, with the same precedence and the same errors.
//
// The parameters, in order of precedence (the first one present wins, as
// in Contiv and the VPP-Agent):
//
//	seq-num=N         one record
//	since=S, until=U  records between Unix times S and U, in seconds, inclusive; either may be left out
//	from=A, to=B      sequence numbers A to B, inclusive; either may be left out
//	first=N           the N oldest records
//	last=N            the N newest records
//
// Every parameter present is checked, even one a preceding parameter
// overrides, so that a typo is not silently ignored. Every error names its
// parameter and is meant to be answered with 400 Bad Request.
package historyquery

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// Kind says which selection a Query makes.
type Kind int

// The selections, in order of precedence.
const (
	// All selects every record: no selecting parameter was given.
	All Kind = iota
	// One selects the record Query.SeqNum.
	One
	// Window selects the records between Query.Since and Query.Until.
	Window
	// Range selects the records numbered Query.From to Query.To.
	Range
	// First selects the Query.N oldest records.
	First
	// Last selects the Query.N newest records.
	Last
)

// Query is a parsed history selection. Only the fields of its Kind are
// set.
type Query struct {
	Kind Kind
	// SeqNum is the record of One.
	SeqNum uint64
	// Since and Until bound Window, inclusive; a zero time is an open
	// side. Until is the end of the second the parameter names, because
	// the parameter is inclusive at its precision.
	Since, Until time.Time
	// From and To bound Range, inclusive; To is math.MaxUint64 when the
	// parameter was left out.
	From, To uint64
	// N is the count of First and Last.
	N uint64
}

// The Unix seconds accepted by time parameters: years 1 to 9999, what
// time.Time and RFC 3339 (so JSON) represent. Beyond them time.Unix wraps
// around, so that a huge value would select nothing or everything.
const (
	MinUnixSeconds = -62135596800 // 0001-01-01T00:00:00Z
	MaxUnixSeconds = 253402300799 // 9999-12-31T23:59:59Z
)

// Parse reads the history selection of q; see the package documentation.
func Parse(q url.Values) (Query, error) {
	seq, hasSeq, errSeq := Uint(q, "seq-num")
	since, hasSince, errSince := UnixTime(q, "since")
	until, hasUntil, errUntil := UnixTime(q, "until")
	from, hasFrom, errFrom := Uint(q, "from")
	to, hasTo, errTo := Uint(q, "to")
	first, hasFirst, errFirst := Uint(q, "first")
	last, hasLast, errLast := Uint(q, "last")
	if err := errors.Join(errSeq, errSince, errUntil, errFrom, errTo, errFirst, errLast); err != nil {
		return Query{}, err
	}
	if hasSince && hasUntil && until.Before(since) {
		return Query{}, fmt.Errorf("until (%d) is before since (%d)", until.Unix(), since.Unix())
	}
	if hasFrom && hasTo && to < from {
		return Query{}, fmt.Errorf("to (%d) is before from (%d)", to, from)
	}
	switch {
	case hasSeq:
		return Query{Kind: One, SeqNum: seq}, nil
	case hasSince || hasUntil:
		if hasUntil {
			until = until.Add(time.Second - 1)
		}
		return Query{Kind: Window, Since: since, Until: until}, nil
	case hasFrom || hasTo:
		if !hasTo {
			to = ^uint64(0)
		}
		return Query{Kind: Range, From: from, To: to}, nil
	case hasFirst:
		return Query{Kind: First, N: first}, nil
	case hasLast:
		return Query{Kind: Last, N: last}, nil
	}
	return Query{Kind: All}, nil
}

// Uint reads the non-negative integer parameter name of q; ok tells
// whether it is present.
func Uint(q url.Values, name string) (v uint64, ok bool, err error) {
	if !q.Has(name) {
		return 0, false, nil
	}
	v, err = strconv.ParseUint(q.Get(name), 10, 64)
	if err != nil {
		return 0, true, fmt.Errorf("parameter %s: want a non-negative integer, got %q", name, q.Get(name))
	}
	return v, true, nil
}

// UnixTime reads the parameter name of q as Unix seconds between
// MinUnixSeconds and MaxUnixSeconds; ok tells whether it is present.
func UnixTime(q url.Values, name string) (t time.Time, ok bool, err error) {
	if !q.Has(name) {
		return time.Time{}, false, nil
	}
	v := q.Get(name)
	sec, err := strconv.ParseInt(v, 10, 64)
	if errors.Is(err, strconv.ErrRange) || err == nil && (sec < MinUnixSeconds || sec > MaxUnixSeconds) {
		return time.Time{}, true, fmt.Errorf("parameter %s: Unix seconds %s out of range: want %d (year 1) to %d (year 9999)",
			name, v, MinUnixSeconds, MaxUnixSeconds)
	}
	if err != nil {
		return time.Time{}, true, fmt.Errorf("parameter %s: want Unix seconds, got %q", name, v)
	}
	return time.Unix(sec, 0), true, nil
}
