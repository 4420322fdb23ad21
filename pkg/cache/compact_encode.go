package cache

import (
	"bytes"
	"encoding/json"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
)

// sizedMarshaler is implemented by the built-in kinds' generated protobuf
// types: they marshal into a buffer the caller gives, of the size Size
// returns, where Marshal allocates (and zeroes) one for every object.
type sizedMarshaler interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// marshal encodes ro into a buffer from the codec's pool and calls use with
// it; use must not keep the slice it is given (pack copies what it keeps).
// The encoded form of each object is garbage once compressed: encoding it
// into a reused buffer spares the allocation and clearing of a buffer the
// size of the whole object (several KB for a Pod) per object stored.
func (c *codec) marshal(ro runtime.Object, use func([]byte)) error {
	buf, _ := c.encoded.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	defer c.encoded.Put(buf)
	buf.Reset()
	if m, ok := ro.(sizedMarshaler); ok && c.proto {
		size := m.Size()
		buf.Grow(size)
		data := buf.AvailableBuffer()[:size]
		n, err := m.MarshalToSizedBuffer(data)
		if err != nil {
			return err
		}
		// MarshalToSizedBuffer writes from the end of the buffer back.
		use(data[size-n:])
		return nil
	}
	// json.Marshal returns a copy of what it encoded; an Encoder writes it
	// into the buffer instead, followed by a newline that is not kept.
	if err := json.NewEncoder(buf).Encode(ro); err != nil {
		return err
	}
	use(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return nil
}

// keepPacked returns what a compact object keeps of data, the encoded
// form in a reused buffer: compressed when that saves enough, otherwise a
// copy of data; and whether it is compressed.
func (c *codec) keepPacked(data []byte) ([]byte, bool) {
	z, packed := c.pack(data)
	if packed {
		return z, true
	}
	return slices.Clone(data), false
}
