package render

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/lariat-dev/lariat/codegen/internal/model"
)

// Output is where the controllers go: a directory and its import path.
type Output struct {
	// Dir is the directory the group directories are created in.
	Dir string
	// ImportPath is Dir's import path, by which generated packages import
	// each other.
	ImportPath string
}

type groupData struct {
	Header, PkgName, Group, Accessor string
	Versions                         []versionData
}

type versionData struct {
	Header, Name, Group, Accessor     string
	APIAlias, APIPath, ControllerPath string
	Kinds                             []kindData
}

type kindData struct {
	*model.Kind
	Header, Group, Version, APIAlias, APIPath, Field string
	// Lower is the kind's name with a lower-case first letter, for
	// unexported helpers.
	Lower string
}

// Controllers returns the controller files of a group by path: factory.go
// and interface.go in <dir>/<group>, and interface.go and one file per kind
// in <dir>/<group>/<version>, as wrangler lays them out.
func Controllers(g *model.Group, out Output, header []byte) (map[string][]byte, error) {
	hdr := headerText(header)
	groupDir := filepath.Join(out.Dir, g.DirName())
	groupPath := path.Join(out.ImportPath, g.DirName())
	data := groupData{Header: hdr, PkgName: g.PackageName(), Group: g.DirName(), Accessor: g.AccessorName()}
	for _, v := range g.Versions {
		vd := versionData{
			Header:         hdr,
			Name:           v.Name,
			Group:          g.DirName(),
			Accessor:       exported(v.Name),
			APIAlias:       g.PackageName() + v.Name,
			APIPath:        v.PkgPath,
			ControllerPath: path.Join(groupPath, v.Name),
		}
		for _, k := range v.Kinds {
			vd.Kinds = append(vd.Kinds, kindData{
				Kind: k, Header: hdr, Group: g.DirName(), Version: v.Name,
				APIAlias: vd.APIAlias, APIPath: v.PkgPath,
				Field: unexported(k.Name) + "Controller",
				Lower: unexported(k.Name),
			})
		}
		data.Versions = append(data.Versions, vd)
	}

	files := map[string][]byte{}
	add := func(name, tmpl string, d any) error {
		if _, dup := files[name]; dup {
			// A kind named Interface would overwrite interface.go.
			return fmt.Errorf("%s would be generated twice; rename the kind it is named after", name)
		}
		content, err := execute(tmpl, d)
		if err == nil {
			files[name] = content
		}
		return err
	}
	if err := add(filepath.Join(groupDir, "factory.go"), "factory.go.tmpl", data); err != nil {
		return nil, err
	}
	if err := add(filepath.Join(groupDir, "interface.go"), "group.go.tmpl", data); err != nil {
		return nil, err
	}
	for _, vd := range data.Versions {
		versionDir := filepath.Join(groupDir, vd.Name)
		if err := add(filepath.Join(versionDir, "interface.go"), "version.go.tmpl", vd); err != nil {
			return nil, err
		}
		for _, kd := range vd.Kinds {
			if err := add(filepath.Join(versionDir, strings.ToLower(kd.Name)+".go"), "kind.go.tmpl", kd); err != nil {
				return nil, err
			}
		}
	}
	return files, nil
}

func exported(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func unexported(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
