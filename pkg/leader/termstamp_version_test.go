package leader

import "testing"

// TestReadVersionIsTheAPIServers: a resourceVersion is read as the API
// server's versioner reads it (a decimal uint64, 0 being none), so a PUT
// of "0" is taken for what may create, and a create-only apply is known
// however its number is written.
func TestReadVersionIsTheAPIServers(t *testing.T) {
	for _, c := range []struct {
		rv                    string
		createOnly, versioned bool
	}{
		{"", false, false},
		{"0", false, false},
		{"00", false, false},
		{"1", false, true},
		{"0042", false, true},
		{createOnlyVersion, true, true},
		{"0" + createOnlyVersion, true, true},
		{"not-a-number", false, true}, // refused by the API server: creates nothing
		{"-0", false, true},
	} {
		createOnly, versioned := readVersion(c.rv)
		if createOnly != c.createOnly || versioned != c.versioned {
			t.Errorf("readVersion(%q) = createOnly %v, versioned %v; want %v, %v", c.rv, createOnly, versioned, c.createOnly, c.versioned)
		}
	}
}
