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

// checkStorageVersions checks each kind across the versions of its group:
// the API server stores a kind in exactly one version, so a kind declared
// in several must mark one +kubebuilder:storageversion, and at least one
// version must be served. Each problem is reported at the type declaration
// of every version concerned, the places to edit.
func checkStorageVersions(groups []*Group, errs *errorList) {
	for _, g := range groups {
		byKind := map[string][]*Kind{}
		versionOf := map[*Kind]string{}
		var names []string
		for _, v := range g.Versions {
			for _, k := range v.Kinds {
				if byKind[k.Name] == nil {
					names = append(names, k.Name)
				}
				byKind[k.Name] = append(byKind[k.Name], k)
				versionOf[k] = v.Name
			}
		}
		for _, name := range names {
			kinds := byKind[name]
			var all, storage []string
			served := false
			for _, k := range kinds {
				all = append(all, versionOf[k])
				if k.Storage {
					storage = append(storage, versionOf[k])
				}
				served = served || !k.Unserved
			}
			for _, k := range kinds {
				switch {
				case len(kinds) > 1 && len(storage) == 0:
					errs.add(k.Pos, "kind %s of %s is declared in versions %s, and none is marked +kubebuilder:storageversion: mark the one the API server stores it in",
						name, g.Name, strings.Join(all, ", "))
				case len(storage) > 1 && k.Storage:
					errs.add(k.Pos, "kind %s of %s is marked +kubebuilder:storageversion in versions %s: mark exactly one",
						name, g.Name, strings.Join(storage, ", "))
				}
				if !served {
					errs.add(k.Pos, "kind %s of %s is marked +kubebuilder:unservedversion in every version (%s): serve at least one",
						name, g.Name, strings.Join(all, ", "))
				}
			}
		}
	}
}
