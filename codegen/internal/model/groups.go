package model

import (
	"slices"
	"strings"
)

// groupVersions sorts versions into groups, rejecting two packages for one
// group version: generated code imports one API package per version.
func groupVersions(versions []*Version, errs *errorList) []*Group {
	byName := map[string]*Group{}
	seen := map[string]*Version{}
	for _, v := range versions {
		key := v.Group + "/" + v.Name
		if first, dup := seen[key]; dup {
			reportDuplicate(first, v, errs)
			continue
		}
		seen[key] = v
		g := byName[v.Group]
		if g == nil {
			g = &Group{Name: v.Group}
			byName[v.Group] = g
		}
		g.Versions = append(g.Versions, v)
	}
	groups := make([]*Group, 0, len(byName))
	for _, g := range byName {
		slices.SortFunc(g.Versions, func(a, b *Version) int { return strings.Compare(a.Name, b.Name) })
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b *Group) int { return strings.Compare(a.Name, b.Name) })
	return groups
}

// reportDuplicate names each kind both packages declare, or else the
// second package.
func reportDuplicate(first, second *Version, errs *errorList) {
	kinds := map[string]*Kind{}
	for _, k := range first.Kinds {
		kinds[k.Name] = k
	}
	conflict := false
	for _, k := range second.Kinds {
		if prev, ok := kinds[k.Name]; ok {
			conflict = true
			errs.add(k.Pos, "kind %s of %s/%s conflicts with the kind declared at %s", k.Name, second.Group, second.Name,
				positionString(errs.base, prev))
		}
	}
	if !conflict {
		errs.add(second.Pos, "package %s declares %s/%s, which package %s declares too: put one group version in one package",
			second.PkgPath, second.Group, second.Name, first.PkgPath)
	}
}

func positionString(base string, k *Kind) string {
	pos := k.Pos
	pos.Filename = relativeTo(base, pos.Filename)
	return pos.String()
}
