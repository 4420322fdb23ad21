package dashboard

import (
	"strings"
	"testing"
)

// TestScrubKeepsTheReasonAndDropsTheValue: the API server's field errors
// of a redacted kind lose the values they quote, quoted or not, and keep
// the field and the rule.
func TestScrubKeepsTheReasonAndDropsTheValue(t *testing.T) {
	for in, want := range map[string]string{
		`Credentials.example.com "db" is invalid: spec.password: Invalid value: "Hunter2": spec.password in body should match '^[a-z0-9]+$'`: `Credentials.example.com "<redacted>" is invalid: spec.password: Invalid value: "<redacted>": spec.password in body should match '^[a-z0-9]+$'`,
		`spec.pin: Invalid value: 12345: must be less than 100`:                                                                              `spec.pin: Invalid value: <redacted>: must be less than 100`,
		`spec.mode: Unsupported value: "se\"cret": supported: a`:                                                                             `spec.mode: Unsupported value: "<redacted>": supported: a`,
		"data.key: Invalid value: `x y`":                                                                                                     `data.key: Invalid value: "<redacted>"`,
		`spec.token: Invalid value: map[a:b]`:                                                                                                `spec.token: Invalid value: <redacted>`,
		`connection refused`:                                                                                                                 `connection refused`,
		"data[pin]: Invalid value: 12345\ndata[user]: Required value":                                                                        "data[pin]: Invalid value: <redacted>\ndata[user]: Required value",
		`create &Secret{ObjectMeta:{db  prod},StringData:map[string]string{pin: Hunter2,},}: unable`:                                         `create &Secret{<redacted>}: unable`,
		`apply {{ } {db prod} map[pin:[120 32 121]] map[pin:a:b]}: conflict`:                                                                 `apply {<redacted>}: conflict`,
		`x map[pin:Hunter2 nested:map[a:b]] y`:                                                                                               `x map[<redacted>] y`,
		`cut short &Secret{StringData:map[string]string{pin: Hunter2`:                                                                        `cut short &Secret{<redacted>`,
	} {
		got := scrub(in)
		if got != want {
			t.Errorf("scrub(%s)\n got %s\nwant %s", in, got, want)
		}
		for _, secret := range []string{"Hunter2", "12345", "se\\\"cret", "x y", "a:b"} {
			if strings.Contains(got, secret) {
				t.Errorf("scrub(%s) = %s: still shows %s", in, got, secret)
			}
		}
	}
}
