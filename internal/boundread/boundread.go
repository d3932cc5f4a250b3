// Package boundread reads a body up to a limit, growing its buffer with what arrives rather than
// with what the sender declared: both the envelope's reader and the client read failure and
// success bodies with it.
package boundread

import "io"

// Read reads r to its end or to limit bytes, whichever comes first. The buffer grows
// with what arrives, never with what the sender declared: hint (a Content-Length, -1 when
// unknown) only sizes the first read, up to first, and stops a doubling short of the
// declared end, so that an honest length is read without a spare copy. Each step doubles the
// buffer (or goes to the limit when the next doubling would pass it), so all it allocates stays
// under about twice what arrived, and twice the limit, where append's growth of large slices by
// a quarter allocated five times the limit.
func Read(r io.Reader, limit, hint int64) ([]byte, error) {
	size := int64(512)
	if hint >= 0 {
		size = min(hint, first-1) + 1 // room to see the end of a short body without growing
	}
	buf := make([]byte, 0, min(size, limit))
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			next := 2 * int64(cap(buf))
			switch {
			case hint >= int64(len(buf)) && hint < next-1: // (hint+1 may overflow)
				next = hint + 1 // the declared end, and room to see it
			case 2*next > limit:
				next = limit // the step after would pass it: one step to the limit, not two
			}
			grown := make([]byte, len(buf), min(max(next, 512), limit))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// first is the most Read allocates before anything arrived.
const first = 64 << 10
