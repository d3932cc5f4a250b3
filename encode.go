package remedy

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/remedy-go/remedy/internal/jsonw"
)

// MarshalJSON encodes the envelope in the canonical form the reference server emits on REST and
// MCP alike: {"error":{...}} with statusCode, code, message, issues (each with path as an array
// of segments and pointer as RFC 6901), schema, retryable, retry_after_ms, hint, suggestions,
// severity, category, next_operation, next_operation_args, confirmationToken, trace_id,
// docs_url, and the other normalized fields under their snake_case names. Members the envelope
// does not hold are omitted. Parse reads it back to the same envelope (Dialect and RetrySource
// aside: the flag is then the body's).
func (e *Envelope) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, e.sizeHint()+16)
	b = append(b, `{"error":`...)
	b = e.appendCanonical(b)
	return append(b, '}'), nil
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

func (e *Envelope) appendCanonical(b []byte) []byte {
	w := objWriter{b: append(b, '{')}
	if e.Status != 0 {
		w.num("statusCode", int64(e.Status))
	}
	w.str("code", e.Code)
	w.str("type", e.Type)
	w.str("title", e.Title)
	w.str("message", e.Message)
	e.appendShared(&w, false)
	return append(w.b, '}')
}

func (e *Envelope) appendProblem(b []byte) []byte {
	w := objWriter{b: append(b, '{')}
	typ := e.Type
	if typ == "" {
		typ = "about:blank"
	}
	w.str("type", typ)
	w.str("title", e.Title)
	if e.Status != 0 {
		w.num("status", int64(e.Status))
	}
	w.str("detail", e.Message)
	w.str("code", e.Code)
	e.appendShared(&w, true)
	return append(w.b, '}')
}

// appendShared writes the members both encodings carry under the same names.
func (e *Envelope) appendShared(w *objWriter, problem bool) {
	if len(e.Issues) > 0 {
		w.key("issues")
		w.b = append(w.b, '[')
		for i := range e.Issues {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = e.Issues[i].appendJSON(w.b)
		}
		w.b = append(w.b, ']')
	}
	w.raw("schema", e.Schema)
	w.boolean("retryable", e.Retryable)
	if e.RetryAfter > 0 {
		w.key("retry_after_ms")
		w.b = strconv.AppendFloat(w.b, float64(e.RetryAfter)/float64(time.Millisecond), 'f', -1, 64)
	}
	w.str("hint", e.Hint)
	w.strs("suggestions", e.Suggestions)
	w.str("severity", string(e.Severity))
	w.str("category", string(e.Category))
	w.str("next_operation", e.NextOperation)
	w.raw("next_operation_args", e.NextOperationArgs)
	w.str("confirmationToken", e.ConfirmationToken)
	w.str("current_status", e.CurrentStatus)
	w.str("required_status", e.RequiredStatus)
	w.str("trace_id", e.TraceID)
	w.str("request_id", e.RequestID)
	w.str("docs_url", e.DocsURL)
	w.strs("related_codes", e.RelatedCodes)
	w.raw("example_request", e.ExampleRequest)
	w.str("intent", e.Intent)
	w.str("deprecated_type", e.DeprecatedType)
	if len(e.Errors) > 0 {
		w.key("errors")
		w.b = append(w.b, '[')
		for i := range e.Errors {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			if problem {
				w.b = e.Errors[i].appendProblem(w.b)
			} else {
				w.b = e.Errors[i].appendCanonical(w.b)
			}
		}
		w.b = append(w.b, ']')
	}
}

func (is *Issue) appendJSON(b []byte) []byte {
	w := objWriter{b: append(b, '{')}
	w.key("path")
	w.b = jsonw.AppendPointerSegments(w.b, is.Path)
	w.key("pointer")
	w.b = jsonw.AppendString(w.b, is.Path)
	w.str("code", is.Code)
	w.str("message", is.Message)
	w.raw("expected", is.Expected)
	w.raw("received", is.Received)
	if len(is.AllowedValues) > 0 {
		w.key("allowed_values")
		w.b = append(w.b, '[')
		for i, v := range is.AllowedValues {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = appendRaw(w.b, v)
		}
		w.b = append(w.b, ']')
	}
	w.raw("suggested_value", is.SuggestedValue)
	return append(w.b, '}')
}

// objWriter appends the members of one JSON object, skipping empty values.
type objWriter struct {
	b    []byte
	some bool
}

func (w *objWriter) key(k string) {
	if w.some {
		w.b = append(w.b, ',')
	}
	w.some = true
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, `":`...)
}

func (w *objWriter) str(k, v string) {
	if v != "" {
		w.key(k)
		w.b = jsonw.AppendString(w.b, v)
	}
}

func (w *objWriter) num(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *objWriter) boolean(k string, v bool) {
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
}

func (w *objWriter) raw(k string, v json.RawMessage) {
	if len(v) > 0 {
		w.key(k)
		w.b = appendRaw(w.b, v)
	}
}

func (w *objWriter) strs(k string, v []string) {
	if len(v) == 0 {
		return
	}
	w.key(k)
	w.b = append(w.b, '[')
	for i, s := range v {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = jsonw.AppendString(w.b, s)
	}
	w.b = append(w.b, ']')
}

// appendRaw writes raw JSON, or null when it is not valid JSON (a RawMessage set by hand), so
// the output is always one valid document.
func appendRaw(b []byte, v json.RawMessage) []byte {
	if !validJSON(view(v)) {
		return append(b, "null"...)
	}
	return append(b, v...)
}

// quoteJSON encodes s as a JSON string.
func quoteJSON(s string) json.RawMessage { return jsonw.AppendString(nil, s) }
