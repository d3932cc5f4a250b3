package server

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/jsonw"
)

// The canonical encoding of a validation refusal, written here rather than by
// remedy.Envelope.MarshalJSON, which writes the same bytes (TestEncodeMade and FuzzEncodeMade
// hold the two together) but cannot know where its raw JSON members come from: it parses each
// again before copying it, in case a handler set one by hand, and writes null for one that is
// not JSON, or nested too deep, or holds too long a number or a key named twice. A refusal's
// raw members are the server's own, valid by construction: the input schema's text, whose
// document is checked once at registration (validator.plain), and the values the validator
// encoded, checked here for the bounds only (plainRaw), which costs a fraction of parsing them
// again. The buffer is sized from the envelope's texts, so that it is allocated once.

// encoderKeeps reports whether remedy's encoder writes the raw JSON v as it is, rather than
// null (see validator.plain).
func encoderKeeps(v json.RawMessage) bool {
	b, err := (&remedy.Envelope{Schema: v}).MarshalJSON()
	return err == nil && string(b) == `{"error":{"schema":`+string(v)+`,"retryable":false}}`
}

// plainRaw reports whether remedy's encoder writes the valid JSON v as it is: nested at most
// 64 deep, with no number longer than 64 bytes. (It also looks for keys named twice, which
// the values the validator encodes never hold: their objects were decoded into maps.)
func plainRaw(v []byte) bool {
	const most = 64
	depth, num := 0, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '"':
			for i++; i < len(v) && v[i] != '"'; i++ {
				if v[i] == '\\' {
					i++
				}
			}
			num = 0
		case '{', '[':
			if depth++; depth > most {
				return false
			}
			num = 0
		case '}', ']':
			depth--
			num = 0
		case '-', '+', '.', 'e', 'E', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			if num++; num > most {
				return false
			}
		default:
			num = 0
		}
	}
	return true
}

// madeEnvelope reports whether encodeMade writes env: one with none of the members a handler
// sets by hand (nested errors, next-operation arguments, an example request).
func madeEnvelope(env *remedy.Envelope) bool {
	return len(env.Errors) == 0 && env.NextOperationArgs == nil && env.ExampleRequest == nil
}

// encodeMade is env.MarshalJSON() for a refusal the validate stage made (see Problem.made),
// whose schema remedy's encoder keeps whole; ok is false when one of its issues' values is
// one that encoder would not keep.
func encodeMade(env *remedy.Envelope) (_ []byte, ok bool) {
	for i := range env.Issues {
		is := &env.Issues[i]
		if !plainRaw(is.Expected) || !plainRaw(is.Received) || !plainRaw(is.SuggestedValue) {
			return nil, false
		}
		for _, v := range is.AllowedValues {
			if !plainRaw(v) {
				return nil, false
			}
		}
	}
	b := make([]byte, 0, madeSize(env))
	b = append(b, `{"error":`...)
	w := encWriter{jsonw.Object{B: append(b, '{')}}
	if env.Status != 0 {
		w.Key("statusCode")
		w.B = strconv.AppendInt(w.B, int64(env.Status), 10)
	}
	w.Str("code", env.Code)
	w.Str("type", env.Type)
	w.Str("title", env.Title)
	w.Str("message", env.Message)
	if len(env.Issues) > 0 {
		w.Key("issues")
		w.B = append(w.B, '[')
		for i := range env.Issues {
			if i > 0 {
				w.B = append(w.B, ',')
			}
			w.issue(&env.Issues[i])
		}
		w.B = append(w.B, ']')
	}
	w.raw("schema", env.Schema)
	w.Key("retryable")
	w.B = strconv.AppendBool(w.B, env.Retryable)
	if env.RetryAfter > 0 {
		w.Key("retry_after_ms")
		w.B = strconv.AppendFloat(w.B, float64(env.RetryAfter)/float64(time.Millisecond), 'f', -1, 64)
	}
	w.Str("hint", env.Hint)
	w.Strs("suggestions", env.Suggestions)
	w.Str("severity", string(env.Severity))
	w.Str("category", string(env.Category))
	w.Str("next_operation", env.NextOperation)
	w.Str("confirmationToken", env.ConfirmationToken)
	w.Str("current_status", env.CurrentStatus)
	w.Str("required_status", env.RequiredStatus)
	w.Str("trace_id", env.TraceID)
	w.Str("request_id", env.RequestID)
	w.Str("docs_url", env.DocsURL)
	w.Strs("related_codes", env.RelatedCodes)
	w.Str("intent", env.Intent)
	w.Str("deprecated_type", env.DeprecatedType)
	return append(w.B, '}', '}'), true
}

// madeSize is what encodeMade writes for env when its texts need no escape (an escape makes
// the buffer grow once).
func madeSize(env *remedy.Envelope) int {
	n := len(`{"error":{"statusCode":000,"retryable":false}}`)
	str := func(key, v string) {
		if v != "" {
			n += len(key) + len(v) + 6 // ,"key":"v"
		}
	}
	strs := func(key string, v []string) {
		if len(v) > 0 {
			n += len(key) + 5 // ,"key":[]
			for _, s := range v {
				n += len(s) + 3
			}
		}
	}
	str("code", env.Code)
	str("type", env.Type)
	str("title", env.Title)
	str("message", env.Message)
	if len(env.Schema) > 0 {
		n += len(`,"schema":`) + len(env.Schema)
	}
	if env.RetryAfter > 0 {
		n += len(`,"retry_after_ms":`) + 24
	}
	str("hint", env.Hint)
	strs("suggestions", env.Suggestions)
	str("severity", string(env.Severity))
	str("category", string(env.Category))
	str("next_operation", env.NextOperation)
	str("confirmationToken", env.ConfirmationToken)
	str("current_status", env.CurrentStatus)
	str("required_status", env.RequiredStatus)
	str("trace_id", env.TraceID)
	str("request_id", env.RequestID)
	str("docs_url", env.DocsURL)
	strs("related_codes", env.RelatedCodes)
	str("intent", env.Intent)
	str("deprecated_type", env.DeprecatedType)
	if len(env.Issues) > 0 {
		n += len(`,"issues":[]`)
	}
	for i := range env.Issues {
		is := &env.Issues[i]
		// {"path":["a",0],"pointer":"/a/0","code":"c","message":"m"}, and a comma: the path's
		// segments are quoted at most, and its slashes become commas
		n += len(`{"path":[],"pointer":"","code":"","message":""},`) + 2*len(is.Path) +
			2*strings.Count(is.Path, "/") + len(is.Code) + len(is.Message)
		for _, m := range [...]struct {
			key string
			v   []byte
		}{{"expected", is.Expected}, {"received", is.Received}, {"suggested_value", is.SuggestedValue}} {
			if len(m.v) > 0 {
				n += len(m.key) + 4 + len(m.v) // ,"key":v
			}
		}
		if len(is.AllowedValues) > 0 {
			n += len(`,"allowed_values":[]`)
			for _, v := range is.AllowedValues {
				n += max(len(v), 4) + 1 // null for an empty one
			}
		}
	}
	return n
}

// encWriter appends the members of one JSON object as remedy's encoder does, skipping empty
// values; raw values are written as they are (see encodeMade).
type encWriter struct{ jsonw.Object }

func (w *encWriter) raw(k string, v []byte) {
	if len(v) > 0 {
		w.Key(k)
		w.B = append(w.B, v...)
	}
}

// issue writes one issue as an object of its own.
func (w *encWriter) issue(is *remedy.Issue) {
	iw := encWriter{jsonw.Object{B: append(w.B, '{')}}
	iw.Key("path")
	iw.B = jsonw.AppendPointerSegments(iw.B, is.Path)
	iw.Key("pointer")
	iw.B = jsonw.AppendString(iw.B, is.Path)
	iw.Str("code", is.Code)
	iw.Str("message", is.Message)
	iw.raw("expected", is.Expected)
	iw.raw("received", is.Received)
	if len(is.AllowedValues) > 0 {
		iw.Key("allowed_values")
		iw.B = append(iw.B, '[')
		for i, v := range is.AllowedValues {
			if i > 0 {
				iw.B = append(iw.B, ',')
			}
			if len(v) == 0 {
				iw.B = append(iw.B, "null"...) // as remedy writes an empty value in a list
				continue
			}
			iw.B = append(iw.B, v...)
		}
		iw.B = append(iw.B, ']')
	}
	iw.raw("suggested_value", is.SuggestedValue)
	w.B = append(iw.B, '}')
}
