package dependents

import (
	"fmt"
	"testing"
)

// TestReportsIndex: the object index follows the reports as they are set
// and dropped, and names the owner that keeps an object before one refused
// it or one that leaves it out.
func TestReportsIndex(t *testing.T) {
	r := newReports()
	r.set("ns/a", "", 1, &desired{objects: []objState{{key: "x", label: "ConfigMap x"}, {key: "y", label: "ConfigMap y"}}}, nil)
	r.set("ns/b", "", 1, &desired{objects: []objState{{key: "x", label: "ConfigMap x", contested: "it is ns/a's"}},
		left: []objState{{key: "z", label: "ConfigMap z"}}}, nil)
	for _, c := range []struct {
		obj, owner string
		ok         bool
	}{{"x", "ns/a", true}, {"y", "ns/a", true}, {"z", "", false}, {"w", "", false}} {
		if owner, ok := r.ownerOf(c.obj); owner != c.owner || ok != c.ok {
			t.Errorf("ownerOf(%s) = %q, %v; want %q, %v", c.obj, owner, ok, c.owner, c.ok)
		}
	}
	if st, ok := r.stateOf("ns/b", "z"); !ok || st.label != "ConfigMap z" {
		t.Errorf("stateOf(ns/b, z) = %+v, %v: the object b leaves out", st, ok)
	}
	if st, ok := r.stateOf("ns/b", "x"); !ok || st.contested == "" {
		t.Errorf("stateOf(ns/b, x) = %+v, %v: b's own state of x (refused), not a's", st, ok)
	}
	if _, ok := r.stateOf("ns/a", "z"); ok {
		t.Error("stateOf(ns/a, z) found an object only b names")
	}
	// a stops wanting x: b, refused it, is what names it now.
	r.set("ns/a", "", 2, &desired{objects: []objState{{key: "y", label: "ConfigMap y"}}}, nil)
	if owner, ok := r.ownerOf("x"); owner != "ns/b" || !ok {
		t.Errorf("after a let x go, ownerOf(x) = %q, %v; want ns/b", owner, ok)
	}
	r.drop("ns/a")
	r.drop("ns/b")
	if len(r.byObj) != 0 || len(r.m) != 0 {
		t.Errorf("dropped owners left %d index entries, %d reports", len(r.byObj), len(r.m))
	}
}

// BenchmarkReportsLookup: the cost of finding an object's owner (what
// every scheduler state change costs the status handler) with 10 and
// 10,000 owners of 5 objects each; it does not grow with the owners.
func BenchmarkReportsLookup(b *testing.B) {
	for _, n := range []int{10, 10000} {
		b.Run(fmt.Sprintf("owners=%d", n), func(b *testing.B) {
			r := newReports()
			for i := range n {
				d := &desired{}
				for j := range 5 {
					d.objects = append(d.objects, objState{key: fmt.Sprintf("o%d/%d", i, j)})
				}
				r.set(fmt.Sprintf("ns/%d", i), "", 1, d, nil)
			}
			key := fmt.Sprintf("o%d/4", n/2)
			for b.Loop() {
				if _, ok := r.ownerOf(key); !ok {
					b.Fatal("not found")
				}
			}
		})
	}
}
