package historyquery

import (
	"math"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestParsePrecedence(t *testing.T) {
	for query, want := range map[string]Query{
		"":                            {Kind: All},
		"seq-num=3&since=0&from=1":    {Kind: One, SeqNum: 3},
		"since=10&from=1":             {Kind: Window, Since: time.Unix(10, 0)},
		"until=10&first=1":            {Kind: Window, Until: time.Unix(10, 0).Add(time.Second - 1)},
		"from=2&first=1":              {Kind: Range, From: 2, To: math.MaxUint64},
		"to=2&last=1":                 {Kind: Range, To: 2},
		"first=4&last=1":              {Kind: First, N: 4},
		"last=5":                      {Kind: Last, N: 5},
		"since=-62135596800":          {Kind: Window}, // year 1 is the zero time: an open side
		"until=253402300799&from=0":   {Kind: Window, Until: time.Unix(253402300799, 999999999)},
		"since=5&until=5&seq-num=0":   {Kind: One},
		"from=5&to=5&since=1&until=1": {Kind: Window, Since: time.Unix(1, 0), Until: time.Unix(1, 999999999)},
	} {
		q, err := url.ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(q)
		if err != nil {
			t.Errorf("%q: %v", query, err)
			continue
		}
		if got.Kind != want.Kind || got.SeqNum != want.SeqNum || !got.Since.Equal(want.Since) ||
			!got.Until.Equal(want.Until) || got.From != want.From || got.To != want.To || got.N != want.N {
			t.Errorf("%q: got %+v, want %+v", query, got, want)
		}
	}
}

// TestParseErrors: every parameter present is checked, even one that a
// preceding parameter overrides, and every error names its parameter.
func TestParseErrors(t *testing.T) {
	for query, want := range map[string][]string{
		"seq-num=1&last=x":           {"parameter last", `"x"`},
		"since=a&until=b":            {"parameter since", "parameter until"},
		"until=9223372036854775807":  {"parameter until", "out of range"},
		"since=-9223372036854775808": {"parameter since", "out of range"},
		"since=1e3":                  {"parameter since", "want Unix seconds"},
		"time=x&from=-1":             {"parameter from"},
		"since=100&until=50":         {"until (50) is before since (100)"},
		"from=4&to=2&seq-num=1":      {"to (2) is before from (4)"},
	} {
		q, err := url.ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Parse(q)
		if err == nil {
			t.Errorf("%q: no error", query)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", query, err, w)
			}
		}
	}
}
