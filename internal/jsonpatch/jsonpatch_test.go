package jsonpatch

import "testing"

// A remove carries no value; every other operation does, null included.
func TestMarshal(t *testing.T) {
	got, err := Marshal(Test("/a", nil), Add("/b/-", "x"), Replace("/c", []string{}), Remove("/d/0"))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"op":"test","path":"/a","value":null},{"op":"add","path":"/b/-","value":"x"},{"op":"replace","path":"/c","value":[]},{"op":"remove","path":"/d/0"}]`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
