package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestBadInput runs the generator on the broken API packages under
// testdata/bad and checks that it names the file and line at fault.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name  string
		paths string
		want  []string
		// exact means want is the whole report, line by line.
		exact bool
	}{{
		name:  "root type without ObjectMeta",
		paths: "./testdata/bad/nometa/v1",
		want:  []string{"testdata/bad/nometa/v1/types.go:7:6: root type Widget does not embed metav1.ObjectMeta"},
	}, {
		name:  "no group name",
		paths: "./testdata/bad/nogroup/v1",
		want:  []string{"testdata/bad/nogroup/v1/types.go:1:1: package v1 declares API types but has no +groupName=<group> marker"},
	}, {
		name:  "no list type",
		paths: "./testdata/bad/nolist/v1",
		want:  []string{"testdata/bad/nolist/v1/types.go:7:6: kind Widget has no list type: declare WidgetList"},
	}, {
		name:  "unknown scope",
		paths: "./testdata/bad/badscope/v1",
		want:  []string{`testdata/bad/badscope/v1/types.go:8:6: type Widget: unknown scope "Galaxy" in +kubebuilder:resource (want Namespaced or Cluster)`},
	}, {
		name:  "nonNamespaced client of a namespaced CRD",
		paths: "./testdata/bad/nonnamespaced/v1",
		want:  []string{"testdata/bad/nonnamespaced/v1/types.go:9:6: type Widget has +genclient:nonNamespaced but its CRD would be namespaced"},
	}, {
		name:  "unknown marker argument",
		paths: "./testdata/bad/badmarker/v1",
		want:  []string{"testdata/bad/badmarker/v1/types.go:7:1: invalid marker:", "scpe"},
	}, {
		name:  "genclient without root marker",
		paths: "./testdata/bad/genclientonly/v1",
		want:  []string{"testdata/bad/genclientonly/v1/types.go:7:6: type Widget has +genclient but not +kubebuilder:object:root=true"},
	}, {
		name:  "partial own registration",
		paths: "./testdata/bad/partialregister/v1",
		want: []string{
			"testdata/bad/partialregister/v1/types.go:7:7: package v1 declares GroupName but not AddToScheme",
			"testdata/bad/partialregister/v1/types.go:7:7: package v1 declares GroupName but not SchemeGroupVersion",
		},
	}, {
		name:  "every problem at once",
		paths: "./testdata/bad/nometa/v1,./testdata/bad/badscope/v1",
		want: []string{
			"testdata/bad/badscope/v1/types.go:8:6: type Widget: unknown scope",
			"testdata/bad/nometa/v1/types.go:7:6: root type Widget does not embed metav1.ObjectMeta",
		},
	}, {
		name:  "conflicting kind",
		paths: "./testdata/bad/conflict/a/v1,./testdata/bad/conflict/b/v1",
		want: []string{"testdata/bad/conflict/b/v1/types.go:7:6: kind Widget of bad.lariat.dev/v1 conflicts with the kind declared at " +
			"testdata/bad/conflict/a/v1/types.go:7:6"},
	}, {
		// Problems of the model, of the CRD generator and across packages,
		// each at a position in a file, in one run.
		name:  "problems of every stage in one run",
		paths: "./testdata/bad/versions/...",
		want: []string{
			"testdata/bad/versions/v1/types.go:8:6: kind Widget of bad.lariat.dev is declared in versions v1, v2, and none is marked +kubebuilder:storageversion: mark the one the API server stores it in",
			`testdata/bad/versions/v1/types.go:13:2: encountered struct field "Size" without JSON tag in type "Widget"`,
			"testdata/bad/versions/v2/types.go:8:6: kind Widget of bad.lariat.dev is declared in versions v1, v2, and none is marked +kubebuilder:storageversion: mark the one the API server stores it in",
			"testdata/bad/versions/v2/types.go:21:6: root type Gadget does not embed metav1.ObjectMeta",
		},
		exact: true,
	}, {
		name:  "two storage versions",
		paths: "./testdata/bad/twostorage/...",
		want: []string{
			"testdata/bad/twostorage/v1/types.go:9:6: kind Widget of bad.lariat.dev is marked +kubebuilder:storageversion in versions v1, v2: mark exactly one",
			"testdata/bad/twostorage/v2/types.go:9:6: kind Widget of bad.lariat.dev is marked +kubebuilder:storageversion in versions v1, v2: mark exactly one",
		},
		exact: true,
	}, {
		// Unknown markers of the namespaces the generator reads are typos;
		// other tools' markers (+k8s:, +kubebuilder:rbac) are not.
		name:  "misspelt markers",
		paths: "./testdata/bad/typos/v1",
		want: []string{
			"testdata/bad/typos/v1/types.go:10:4: unknown marker +genclient:nonNamespace: did you mean +genclient:nonNamespaced?",
			"testdata/bad/typos/v1/types.go:12:4: unknown marker +kubebuilder:printcolum: did you mean +kubebuilder:printcolumn?",
			"testdata/bad/typos/v1/types.go:17:5: unknown marker +kubebuilder:validation:Minimun: did you mean +kubebuilder:validation:Minimum?",
			"testdata/bad/typos/v1/types.go:18:5: unknown marker +kubebulder:validation:Maximum: did you mean +kubebuilder:validation:Maximum?",
		},
		exact: true,
	}, {
		// Conditions the handlers cannot set are errors, not a silently
		// ignored condition argument (or code that does not compile).
		name:  "conditions of an unsupported shape",
		paths: "./testdata/bad/conditions/v1",
		want: []string{
			"testdata/bad/conditions/v1/types.go:16:2: WidgetStatus.Conditions is []Condition, whose conditions the status and generating handlers cannot set: its element type has no Reason field;",
			"testdata/bad/conditions/v1/types.go:37:2: GadgetStatus.Conditions is []string, whose conditions the status and generating handlers cannot set:",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The output directory lies outside any module: reaching it
			// would be an error too, but a different one.
			args := []string{"-paths", tt.paths, "-output", t.TempDir(), "-crd-dir", t.TempDir()}
			var stdout, stderr bytes.Buffer
			err := run(args, &stdout, &stderr)
			if err == nil {
				t.Fatalf("no error; want %q", tt.want)
			}
			if tt.exact {
				if got, want := err.Error(), strings.Join(tt.want, "\n"); got != want {
					t.Errorf("error\n%s\nwant\n%s", got, want)
				}
				return
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error\n%v\ndoes not contain\n%s", err, want)
				}
			}
		})
	}
}

// TestFlags checks the command line's defaults and its rejections.
func TestFlags(t *testing.T) {
	var stderr bytes.Buffer
	opts, _, err := parseFlags(nil, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if len(opts.Paths) != 1 || opts.Paths[0] != "./api/..." || opts.Output != "./generated" || opts.CRDDir != "./crds" {
		t.Errorf("defaults = %+v", opts)
	}
	opts, _, err = parseFlags([]string{"-paths", "./a,./b", "-paths", "./c"}, &stderr)
	if err != nil || strings.Join(opts.Paths, " ") != "./a ./b ./c" {
		t.Errorf("paths = %q, %v", opts.Paths, err)
	}
	if _, _, err := parseFlags([]string{"./api"}, &stderr); err == nil {
		t.Error("a positional argument was accepted")
	}
	if _, _, err := parseFlags([]string{"-output", ""}, &stderr); err == nil {
		t.Error("an empty output directory was accepted")
	}
}
