package remedy

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/remedy-go/remedy/internal/envwire"
	"github.com/remedy-go/remedy/internal/jsonw"
	"github.com/remedy-go/remedy/internal/tape"
)

// MarshalJSON encodes the envelope in the canonical form the reference server emits on REST and
// MCP alike: {"error":{...}} with statusCode, code, message, issues (each with path as an array
// of segments and pointer as RFC 6901), schema, retryable, retry_after_ms, hint, suggestions,
// severity, category, next_operation, next_operation_args, confirmationToken, trace_id,
// docs_url, and the other normalized fields under their snake_case names. Members the envelope
// does not hold are omitted. Parse reads it back to the same envelope (Dialect and RetrySource
// aside: the flag is then the body's).
func (e *Envelope) MarshalJSON() ([]byte, error) { return e.marshalCanonical(nil, false), nil }

// marshalCanonical is MarshalJSON appended to b, which grows once at most (to about the
// envelope's size); trusted copies the raw JSON members without checking them (see
// envwire.AppendTrusted).
func (e *Envelope) marshalCanonical(b []byte, trusted bool) []byte {
	if need := e.sizeHint() + 16; cap(b)-len(b) < need {
		b = append(make([]byte, 0, len(b)+need), b...)
	}
	b = append(b, `{"error":`...)
	b = e.appendCanonical(b, trusted)
	return append(b, '}')
}

func init() {
	envwire.AppendTrusted = func(b []byte, env any) []byte { return env.(*Envelope).marshalCanonical(b, true) }
}

// MarshalProblem encodes the envelope as RFC 9457 problem details (application/problem+json):
// type (about:blank when the envelope has none), title, status, detail, and every other member
// of the canonical form as an extension under the same name. Nested failures are problems in
// errors.
func (e *Envelope) MarshalProblem() ([]byte, error) {
	return e.appendProblem(make([]byte, 0, e.sizeHint()+32)), nil
}

// sizeHint is about how many bytes the envelope encodes to (its texts and values, each with
// room for its member name), so that encoding grows its buffer once at most.
func (e *Envelope) sizeHint() int {
	const member = 24 // a member name, its quotes, colon and comma
	n := 128          // the members always written (retryable, severity, category) and braces
	for _, s := range [...]string{e.Code, e.Type, e.Title, e.Message, e.Hint, e.NextOperation,
		e.ConfirmationToken, e.CurrentStatus, e.RequiredStatus, e.TraceID, e.RequestID, e.DocsURL,
		e.Intent, e.DeprecatedType} {
		if s != "" {
			n += len(s) + member
		}
	}
	n += len(e.Schema) + len(e.NextOperationArgs) + len(e.ExampleRequest) + 3*member
	for _, s := range e.Suggestions {
		n += len(s) + 3
	}
	for _, s := range e.RelatedCodes {
		n += len(s) + 3
	}
	for i := range e.Issues {
		is := &e.Issues[i]
		n += 6*member + 3*len(is.Path) + len(is.Code) + len(is.Message) + len(is.Expected) +
			len(is.Received) + len(is.SuggestedValue)
		for _, v := range is.AllowedValues {
			n += len(v) + 1
		}
	}
	for i := range e.Errors {
		n += e.Errors[i].sizeHint()
	}
	return n
}

// ProblemContentType is the media type of MarshalProblem's output.
const ProblemContentType = "application/problem+json"

func (e *Envelope) appendCanonical(b []byte, trusted bool) []byte {
	w := objWriter{jsonw.Object{B: append(b, '{')}, trusted}
	if e.Status != 0 {
		w.Int("statusCode", int64(e.Status))
	}
	w.Str("code", e.Code)
	w.Str("type", e.Type)
	w.Str("title", e.Title)
	w.Str("message", e.Message)
	e.appendShared(&w, false)
	return append(w.B, '}')
}

func (e *Envelope) appendProblem(b []byte) []byte {
	w := objWriter{Object: jsonw.Object{B: append(b, '{')}}
	typ := e.Type
	if typ == "" {
		typ = "about:blank"
	}
	w.Str("type", typ)
	w.Str("title", e.Title)
	if e.Status != 0 {
		w.Int("status", int64(e.Status))
	}
	w.Str("detail", e.Message)
	w.Str("code", e.Code)
	e.appendShared(&w, true)
	return append(w.B, '}')
}

// appendShared writes the members both encodings carry under the same names.
func (e *Envelope) appendShared(w *objWriter, problem bool) {
	if len(e.Issues) > 0 {
		w.Key("issues")
		w.B = append(w.B, '[')
		for i := range e.Issues {
			if i > 0 {
				w.B = append(w.B, ',')
			}
			w.B = e.Issues[i].appendJSON(w.B, w.trusted)
		}
		w.B = append(w.B, ']')
	}
	w.raw("schema", e.Schema)
	w.Bool("retryable", e.Retryable)
	if e.RetryAfter > 0 {
		w.Key("retry_after_ms")
		w.B = strconv.AppendFloat(w.B, float64(e.RetryAfter)/float64(time.Millisecond), 'f', -1, 64)
	}
	w.Str("hint", e.Hint)
	w.Strs("suggestions", e.Suggestions)
	w.Str("severity", string(e.Severity))
	w.Str("category", string(e.Category))
	w.Str("next_operation", e.NextOperation)
	w.raw("next_operation_args", e.NextOperationArgs)
	w.Str("confirmationToken", e.ConfirmationToken)
	w.Str("current_status", e.CurrentStatus)
	w.Str("required_status", e.RequiredStatus)
	w.Str("trace_id", e.TraceID)
	w.Str("request_id", e.RequestID)
	w.Str("docs_url", e.DocsURL)
	w.Strs("related_codes", e.RelatedCodes)
	w.raw("example_request", e.ExampleRequest)
	w.Str("intent", e.Intent)
	w.Str("deprecated_type", e.DeprecatedType)
	if len(e.Errors) > 0 {
		w.Key("errors")
		w.B = append(w.B, '[')
		for i := range e.Errors {
			if i > 0 {
				w.B = append(w.B, ',')
			}
			if problem {
				w.B = e.Errors[i].appendProblem(w.B)
			} else {
				w.B = e.Errors[i].appendCanonical(w.B, w.trusted)
			}
		}
		w.B = append(w.B, ']')
	}
}

func (is *Issue) appendJSON(b []byte, trusted bool) []byte {
	w := objWriter{jsonw.Object{B: append(b, '{')}, trusted}
	w.Key("path")
	w.B = jsonw.AppendPointerSegments(w.B, is.Path)
	w.Key("pointer")
	w.B = jsonw.AppendString(w.B, is.Path)
	w.Str("field_as_written", is.Field)
	w.Str("code", is.Code)
	w.Str("message", is.Message)
	w.raw("expected", is.Expected)
	w.raw("received", is.Received)
	if len(is.AllowedValues) > 0 {
		w.Key("allowed_values")
		w.B = append(w.B, '[')
		for i, v := range is.AllowedValues {
			if i > 0 {
				w.B = append(w.B, ',')
			}
			w.value(v)
		}
		w.B = append(w.B, ']')
	}
	w.raw("suggested_value", is.SuggestedValue)
	return append(w.B, '}')
}

// objWriter appends the members of one JSON object, skipping empty values; raw values are
// checked (see appendRaw) unless the caller vouches for them.
type objWriter struct {
	jsonw.Object
	trusted bool
}

func (w *objWriter) raw(k string, v json.RawMessage) {
	if len(v) > 0 {
		w.Key(k)
		w.value(v)
	}
}

// value writes a raw value: as it is when trusted, else through appendRaw; empty is null.
func (w *objWriter) value(v json.RawMessage) {
	if w.trusted && len(v) > 0 {
		w.B = append(w.B, v...)
		return
	}
	w.B = appendRaw(w.B, v)
}

// appendRaw writes raw JSON, or null when it is not valid JSON (a RawMessage set by hand), so
// the output is always one valid document.
func appendRaw(b []byte, v json.RawMessage) []byte {
	if !tape.Valid(tape.View(v)) {
		return append(b, "null"...)
	}
	return append(b, v...)
}

// quoteJSON encodes s as a JSON string.
func quoteJSON(s string) json.RawMessage {
	if v, ok := jsonTypeNames[s]; ok {
		return v
	}
	return jsonw.AppendString(nil, s)
}

// jsonType reports whether s is one of JSON Schema's type names, which Expected holds for a
// type rule.
func jsonType(s string) bool {
	_, ok := jsonTypeNames[s]
	return ok
}

// jsonTypeNames are JSON Schema's type names as JSON strings, which the readers state as the
// type an issue's field expects: quoted once and shared, each capped at its length so that an
// append copies it, so that stating a type costs a parse no allocation.
var jsonTypeNames = func() map[string]json.RawMessage {
	m := make(map[string]json.RawMessage)
	for _, t := range [...]string{"integer", "number", "string", "boolean", "array", "object", "null"} {
		q := jsonw.AppendString(nil, t)
		m[t] = q[:len(q):len(q)]
	}
	return m
}()
