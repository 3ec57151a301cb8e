package wire

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzSeeds are the golden entries, every sample op as a one-op entry, and a
// few broken inputs.
func fuzzSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.hex"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := parseGolden(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		seeds = append(seeds, b)
	}
	for _, c := range append(commandSamples(), refSampleCommands()...) {
		seeds = append(seeds, Entry{NowMs: 1234, Cmds: []Command{c}}.Append(nil))
	}
	seeds = append(seeds, nil, []byte{EntryVersion}, []byte{EntryVersion, 0x80, 0}, []byte{2, 0, 0})
	return seeds
}

// FuzzDecodeEntry: DecodeEntry never panics, its errors are prefixed,
// whatever it accepts re-encodes to exactly the input (the format is
// canonical), and CheckEntry gives the same verdict (the same error).
func FuzzDecodeEntry(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeEntry(b)
		if cerr := CheckEntry(b); fmt.Sprint(cerr) != fmt.Sprint(err) {
			t.Fatalf("CheckEntry: %v; DecodeEntry: %v", cerr, err)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "wire: ") {
				t.Fatalf("error without prefix: %v", err)
			}
			return
		}
		if re := e.Append(nil); !bytes.Equal(re, b) {
			t.Fatalf("re-encoding differs:\n in %x\nout %x", b, re)
		}
	})
}

// FuzzDecodeOp: DecodeOp never panics and what it accepts (commands and
// queries alike) re-encodes to the bytes it consumed.
func FuzzDecodeOp(f *testing.F) {
	for _, op := range allSampleOps() {
		f.Add(AppendOp(nil, op))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		op, rest, err := DecodeOp(b)
		if err != nil {
			if !bytes.Equal(rest, b) {
				t.Fatalf("on error rest must be the input")
			}
			return
		}
		used := b[:len(b)-len(rest)]
		if re := AppendOp(nil, op); !bytes.Equal(re, used) {
			t.Fatalf("re-encoding differs:\n in %x\nout %x", used, re)
		}
	})
}
