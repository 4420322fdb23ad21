package model

import (
	"go/ast"
	"go/token"
	"strings"

	"sigs.k8s.io/controller-tools/pkg/markers"
)

// checkedNamespaces are the marker namespaces whose every marker the
// generator knows (from controller-gen's registry and client-gen's tags):
// an unknown marker in them is a typo that would otherwise be ignored, and
// silently change the generated CRD or controllers. Markers of other
// namespaces (+k8s:, +listType, ...) belong to tools the generator does
// not know completely, and are left alone.
var checkedNamespaces = []string{"kubebuilder", "genclient"}

// otherToolsMarkers are kubebuilder-namespace markers of tools other than
// controller-gen, which API packages may carry.
var otherToolsMarkers = []string{"kubebuilder:scaffold", "kubebuilder:docs-gen"}

// checkMarkerNames reports every marker of a checked namespace in the
// package's comments that reg does not know, with the known marker closest
// to it as a suggestion.
func checkMarkerNames(reg *markers.Registry, files []*ast.File, fset *token.FileSet, errs *errorList) {
	var known []string
	for _, def := range reg.AllDefinitions() {
		known = append(known, def.Name)
	}
	for _, f := range files {
		for _, group := range f.Comments {
			for _, c := range group.List {
				text, offset, ok := markerText(c.Text)
				if !ok {
					continue
				}
				name, suggestion, typo := unknownMarker(reg, known, text)
				if !typo {
					continue
				}
				msg := "unknown marker +" + name
				if suggestion != "" {
					msg += ": did you mean +" + suggestion + "?"
				}
				errs.add(fset.Position(c.Pos()+token.Pos(offset)), "%s", msg)
			}
		}
	}
}

// markerText returns what follows the + of a marker comment ("// +name"
// or "//+name") and the offset of the + in the comment.
func markerText(comment string) (string, int, bool) {
	rest, ok := strings.CutPrefix(comment, "//")
	if !ok {
		return "", 0, false
	}
	trimmed := strings.TrimLeft(rest, " \t")
	if !strings.HasPrefix(trimmed, "+") || len(trimmed) < 2 {
		return "", 0, false
	}
	offset := len(comment) - len(trimmed)
	return strings.TrimSpace(trimmed[1:]), offset, true
}

// unknownMarker reports whether text (a marker without its +) is an
// unknown marker of a checked namespace, with the marker's name and the
// closest known name ("" when none is close).
func unknownMarker(reg *markers.Registry, known []string, text string) (name, suggestion string, typo bool) {
	// The name ends where the arguments start; for "name:field=value"
	// markers the registry also tries "name" without the last segment.
	name, _, _ = strings.Cut(text, "=")
	name, _, _ = strings.Cut(name, " ")
	for _, target := range []markers.TargetType{markers.DescribesPackage, markers.DescribesType, markers.DescribesField} {
		if reg.Lookup("+"+text, target) != nil {
			return "", "", false
		}
	}
	for _, other := range otherToolsMarkers {
		if name == other || strings.HasPrefix(name, other+":") {
			return "", "", false
		}
	}
	ns, rest, hasNS := strings.Cut(name, ":")
	if !hasNS && name != "genclient" {
		return "", "", false
	}
	checked := ""
	for _, want := range checkedNamespaces {
		if ns == want || (editDistance(ns, want) <= 2 && len(ns) >= len(want)-2) {
			checked = want
		}
	}
	if checked == "" {
		return "", "", false
	}
	if rest != "" {
		// A misspelt namespace is matched as if spelt right.
		name = checked + ":" + rest
	}
	// "kubebuilder:printcolum:name" is the marker kubebuilder:printcolum
	// with the field name: compare both readings with the known names.
	candidates := []string{name}
	if i := strings.LastIndex(name, ":"); i > 0 && strings.Contains(text, "=") {
		candidates = append(candidates, name[:i])
	}
	best, bestDist, bestCand := "", -1, name
	for _, cand := range candidates {
		for _, k := range known {
			if !strings.HasPrefix(k, checked) {
				continue
			}
			if d := editDistance(strings.ToLower(cand), strings.ToLower(k)); bestDist < 0 || d < bestDist {
				best, bestDist, bestCand = k, d, cand
			}
		}
	}
	shown := bestCand
	if ns != checked && rest != "" {
		shown = ns + ":" + strings.TrimPrefix(bestCand, checked+":")
	}
	if bestDist < 0 || bestDist > max(2, len(bestCand)/5) {
		best = ""
	}
	return shown, best, true
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
