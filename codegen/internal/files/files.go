// Package files writes the generator's output: only files whose content
// changed are touched, so a second run leaves modification times alone and
// build caches warm.
package files

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// Set is the content of every file a run produces, by path. A nil content
// means the file must not exist.
type Set map[string][]byte

// Add adds files, failing on a path two generators both produce, which
// would otherwise let the last one silently win.
func (s Set) Add(files map[string][]byte) error {
	for _, path := range slices.Sorted(maps.Keys(files)) {
		if _, dup := s[path]; dup {
			return fmt.Errorf("%s is generated twice", path)
		}
		s[path] = files[path]
	}
	return nil
}

// PruneStale marks for deletion every file named *ext below dir that
// carries one of markers (the generator's "Code generated" lines) but that the set does not
// produce: what an earlier run generated for a kind or version that is gone,
// and that would otherwise no longer compile. Files without the marker are
// the user's and are left alone.
func (s Set) PruneStale(dir, ext string, markers ...[]byte) error {
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ext {
			return err
		}
		if _, ours := s[path]; ours {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, marker := range markers {
			if bytes.Contains(data, marker) {
				s[path] = nil
				break
			}
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a first run: nothing to prune
	}
	return err
}

// Write writes the set in path order and returns the paths it changed.
func (s Set) Write() ([]string, error) {
	var changed []string
	for _, path := range slices.Sorted(maps.Keys(s)) {
		did, err := writeFile(path, s[path])
		if err != nil {
			return changed, err
		}
		if did {
			changed = append(changed, path)
		}
	}
	return changed, nil
}

func writeFile(path string, content []byte) (bool, error) {
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if content == nil {
		if !exists {
			return false, nil
		}
		return true, os.Remove(path)
	}
	if exists && bytes.Equal(old, content) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	return true, os.WriteFile(path, content, 0o644)
}
