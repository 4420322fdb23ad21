package kubegen

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"sigs.k8s.io/controller-tools/pkg/loader"
)

// memoryOutput is a genall.OutputRule that keeps files in memory: files of
// a package go to the package's directory, others (CRDs) to dir.
type memoryOutput struct {
	dir string

	mu    sync.Mutex
	files map[string][]byte
}

func (o *memoryOutput) Open(pkg *loader.Package, itemPath string) (io.WriteCloser, error) {
	path := filepath.Join(o.dir, itemPath)
	if pkg != nil {
		if len(pkg.GoFiles) == 0 {
			return nil, fmt.Errorf("package %s has no Go files to place %s next to", pkg.PkgPath, itemPath)
		}
		path = filepath.Join(filepath.Dir(pkg.GoFiles[0]), itemPath)
	}
	return &memoryFile{out: o, path: path}, nil
}

type memoryFile struct {
	bytes.Buffer
	out  *memoryOutput
	path string
}

func (f *memoryFile) Close() error {
	f.out.mu.Lock()
	defer f.out.mu.Unlock()
	if f.out.files == nil {
		f.out.files = map[string][]byte{}
	}
	f.out.files[f.path] = bytes.Clone(f.Bytes())
	return nil
}
