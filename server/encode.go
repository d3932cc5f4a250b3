package server

import (
	"encoding/json"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/envwire"
)

// The canonical encoding of a validation refusal, by remedy's own encoder in its trusted mode
// (envwire.AppendTrusted): remedy.Envelope.MarshalJSON cannot know where its raw JSON members
// come from, so it parses each again before copying it, in case a handler set one by hand, and
// writes null for one that is not JSON, or nested too deep, or holds too long a number or a key
// named twice. A refusal's raw members are the server's own, valid by construction: the input
// schema's text, whose document is checked once at registration (validator.plain), and the
// values the validator encoded, checked here for the bounds only (plainRaw), which costs a
// fraction of parsing them again. TestEncodeMade and FuzzEncodeMade hold the two modes to the
// same bytes.

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

// encodeMade appends env.MarshalJSON() to b, for a refusal the validate stage made (see
// Problem.made), whose schema remedy's encoder keeps whole; ok is false when one of its
// issues' values is one that encoder would not keep.
func encodeMade(b []byte, env *remedy.Envelope) (_ []byte, ok bool) {
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
	return envwire.AppendTrusted(b, env), true
}
