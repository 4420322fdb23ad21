package cache

import (
	"fmt"
	"slices"

	"github.com/klauspost/compress/s2"
)

// A compact object's encoded form is compressed (S2, an LZ77 block format
// that compresses and decompresses at gigabytes a second) when that saves
// at least an eighth of it: objects are mostly text (configuration held in
// ConfigMaps, names, labels, images and env variables repeated across a
// Pod's containers), so most shrink, and those that do not are kept as
// they are rather than paying a decompression for a few bytes.
const packMinSaving = 8 // compress when it saves at least len/packMinSaving

// pack returns data compressed, in a slice of its own exact size, when that
// saves enough; otherwise data itself, and false.
func (c *codec) pack(data []byte) ([]byte, bool) {
	if len(data) < 64 {
		return data, false
	}
	scratch, _ := c.scratch.Get().(*[]byte)
	if scratch == nil {
		scratch = new([]byte)
	}
	defer c.scratch.Put(scratch)
	if need := s2.MaxEncodedLen(len(data)); need > cap(*scratch) {
		if need < 0 {
			return data, false // too large for S2's block format
		}
		*scratch = make([]byte, need)
	}
	z := s2.Encode((*scratch)[:cap(*scratch)], data)
	if len(z) > len(data)-len(data)/packMinSaving {
		return data, false
	}
	// The scratch buffer is the size of the largest object seen: keep only
	// what the object needs.
	return slices.Clone(z), true
}

// unpack returns a compact object's encoded form, decompressed when it was
// compressed. The result is a buffer of its own, never shared: decoders may
// keep parts of what they decode (byte slices) without copying them.
func (o *compactObject) unpack() ([]byte, error) {
	if !o.packed {
		return o.data, nil
	}
	n, err := s2.DecodedLen(o.data)
	if err != nil {
		return nil, fmt.Errorf("compact cache: decompress %s/%s: %w", o.Namespace, o.Name, err)
	}
	out, err := s2.Decode(make([]byte, n), o.data)
	if err != nil {
		return nil, fmt.Errorf("compact cache: decompress %s/%s: %w", o.Namespace, o.Name, err)
	}
	return out, nil
}
