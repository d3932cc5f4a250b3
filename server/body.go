package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/remedy-go/remedy"
)

// readBody reads the request's JSON body, bounded, and decodes it for validation: 415
// unsupported_media_type for a body that is not JSON, 413 payload_too_large past the limit,
// 400 invalid_json (with the byte offset) for malformed JSON. A request without a body (or
// with an empty one) goes on with none.
func readBody(next handler) handler {
	return func(x *exchange) error {
		r := x.r
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			return next(x)
		}
		if !isJSONMedia(r.Header.Get("Content-Type")) {
			p := Error(CodeUnsupportedMediaType, "the body must be JSON (Content-Type: application/json), not "+quoteOr(r.Header.Get("Content-Type"), "an unlabeled body"))
			p.Header = map[string]string{"Accept-Post": "application/json"}
			return p
		}
		limit := x.api.maxBody
		if r.ContentLength > limit {
			return tooLarge(limit)
		}
		body, err := readAll(r.Body, r.ContentLength, limit)
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.Is(err, errTooLarge) || errors.As(err, &mbe) {
				return tooLarge(limit)
			}
			return Error(CodeInvalidJSON, "the body could not be read completely")
		}
		if len(body) == 0 {
			return next(x)
		}
		inst, err := decodeBody(body)
		if err != nil {
			return err
		}
		x.body, x.instance = body, inst
		return next(x)
	}
}

var errTooLarge = errors.New("body too large")

// readAll reads at most limit bytes, sized by the declared length when there is one.
func readAll(r io.Reader, declared, limit int64) ([]byte, error) {
	size := int64(512)
	if declared > 0 {
		size = declared
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(size, limit)+1))
	n, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, errTooLarge
	}
	return buf.Bytes(), nil
}

func tooLarge(limit int64) *Problem {
	return Error(CodePayloadTooLarge, "the body is larger than "+strconv.FormatInt(limit, 10)+" bytes")
}

func quoteOr(s, empty string) string {
	if s == "" {
		return empty
	}
	return strconv.Quote(s)
}

// isJSONMedia reports whether a Content-Type is JSON: application/json or any +json type.
func isJSONMedia(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// decodeBody decodes a body as the validator reads it (numbers as json.Number, as
// jsonschema.UnmarshalJSON decodes them), or says
// where it stops being JSON.
func decodeBody(body []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	if err == nil {
		if _, terr := d.Token(); terr != io.EOF {
			return nil, syntaxProblem(body, d.InputOffset(), "more data after the JSON value")
		}
		return v, nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := se.Offset - 1
		if off < 0 {
			off = 0
		}
		return nil, syntaxProblem(body, off, "")
	}
	return nil, syntaxProblem(body, int64(len(body)), "")
}

// syntaxProblem is 400 invalid_json pointing at the byte where the body stops being JSON.
func syntaxProblem(body []byte, off int64, what string) *Problem {
	off = min(off, int64(len(body)))
	line, col := 1, 1
	for _, c := range body[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	if what == "" {
		if off >= int64(len(body)) {
			what = "unexpected end of the body"
		} else {
			what = "unexpected " + strconv.QuoteRune(rune(body[off]))
			if body[off] >= 0x80 {
				what = "unexpected byte " + strconv.Itoa(int(body[off]))
			}
		}
	}
	pos := "byte " + strconv.FormatInt(off, 10) + " (line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col) + ")"
	p := Error(CodeInvalidJSON, "the body is not valid JSON: "+what+" at "+pos)
	p.Issues = []remedy.Issue{{Code: "syntax", Message: what + " at " + pos}}
	return p
}
