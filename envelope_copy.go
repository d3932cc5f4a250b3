package remedy

import (
	"encoding/json"
	"unsafe"
)

// detacher gives an envelope its own copy of every string and raw JSON value it took from the
// body, packed into one allocation: the parse of a large body reads the caller's bytes in
// place, and the envelope then neither aliases a buffer the caller may reuse nor keeps the
// whole body alive for a few short strings. (A small body is copied whole before it is read:
// see ownedMax.)
type detacher struct {
	lo, hi uintptr // the body's bytes
	n      int     // bytes to copy (first pass)
	buf    []byte  // the copies (second pass)
}

func detach(e *Envelope, body string) {
	if len(body) == 0 {
		return
	}
	lo := uintptr(unsafe.Pointer(unsafe.StringData(body)))
	d := detacher{lo: lo, hi: lo + uintptr(len(body))}
	d.envelope(e)
	if d.n == 0 {
		return
	}
	d.buf = make([]byte, 0, d.n)
	d.envelope(e)
}

// str counts s on the first pass and moves it on the second. A string of the body is moved
// once: afterwards it lies outside the body.
func (d *detacher) str(s *string) {
	if len(*s) == 0 {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(*s)))
	if p < d.lo || p >= d.hi {
		return
	}
	if d.buf == nil {
		d.n += len(*s)
		return
	}
	start := len(d.buf)
	d.buf = append(d.buf, *s...)
	*s = unsafe.String(&d.buf[start], len(*s))
}

// raw is str for a raw JSON value; the moved value's capacity ends where it ends, so that
// appending to it copies.
func (d *detacher) raw(b *json.RawMessage) {
	if len(*b) == 0 {
		return
	}
	s := unsafe.String(unsafe.SliceData(*b), len(*b))
	d.str(&s)
	if d.buf != nil {
		*b = unsafe.Slice(unsafe.StringData(s), len(s))[:len(s):len(s)]
	}
}

func (d *detacher) envelope(e *Envelope) {
	d.raw(&e.Schema)
	d.raw(&e.NextOperationArgs)
	d.raw(&e.ExampleRequest)
	for _, s := range []*string{&e.Code, &e.Type, &e.Title, &e.Message, &e.Hint, &e.NextOperation,
		&e.ConfirmationToken, &e.CurrentStatus, &e.RequiredStatus, &e.TraceID, &e.RequestID,
		&e.DocsURL, &e.Intent, &e.DeprecatedType} {
		d.str(s)
	}
	for i := range e.Suggestions {
		d.str(&e.Suggestions[i])
	}
	for i := range e.RelatedCodes {
		d.str(&e.RelatedCodes[i])
	}
	for i := range e.Issues {
		is := &e.Issues[i]
		d.str(&is.Path)
		d.str(&is.Code)
		d.str(&is.Message)
		d.raw(&is.Expected)
		d.raw(&is.Received)
		d.raw(&is.SuggestedValue)
		for j := range is.AllowedValues {
			d.raw(&is.AllowedValues[j])
		}
	}
	for i := range e.Errors {
		d.envelope(&e.Errors[i])
	}
}
