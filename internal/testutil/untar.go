package testutil

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Untar unpacks the .tar.gz at archive (directories and regular files)
// into a new temporary directory and returns that directory; an entry
// that would land outside it fails the test.
func Untar(t testing.TB, archive string) string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return root
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, filepath.FromSlash(h.Name))
		if p != root && !strings.HasPrefix(p, root+string(filepath.Separator)) {
			t.Fatalf("tar entry %q outside the directory", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				var out *os.File
				if out, err = os.Create(p); err == nil {
					_, err = io.Copy(out, tr)
					if cerr := out.Close(); err == nil {
						err = cerr
					}
				}
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
