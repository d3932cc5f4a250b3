package remedy

import "testing"

// FuzzWireReader: the wire reader never panics, never hands out bytes beyond its input, and
// consumes its input as it goes, whatever the bytes.
func FuzzWireReader(f *testing.F) {
	for _, s := range []string{
		"\x0a\x02\x08\x1e",                             // RetryInfo{retry_delay: 30s}
		"\x0a\x03abc\x12\x01x",                         // two strings
		"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", // the largest varint
		"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", // one bit too many
		"\x0a\xff\xff\xff\xff\x0f",                     // a length past the end
		"\x0b\x0c",                                     // a group
		"\x00",                                         // field number 0
		"\x09\x01\x02\x03",                             // a cut fixed64
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := wireReader{b: b}
		left := len(b)
		for {
			fld, ok := r.next()
			if !ok {
				break
			}
			if len(r.b) >= left {
				t.Fatalf("a field consumed nothing: %d bytes left of %d", len(r.b), left)
			}
			left = len(r.b)
			if fld.num == 0 || len(fld.bytes) > len(b) || cap(fld.bytes) != len(fld.bytes) {
				t.Fatalf("field %+v out of bounds", fld)
			}
		}
		_ = wireDuration(b)
		_ = wireString(b, 1)
	})
}
