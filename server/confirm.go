package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"

	"github.com/remedy-go/remedy"
)

// confirm is the gate of an operation registered with Confirm: a request without a token gets
// a challenge, one with a valid token goes on. It runs after validation, so that only a
// request acceptable in every other way makes the store hold a challenge. The token is spent
// by its first use by the principal it was issued to, whatever the outcome; challenges are
// kept in the principal's scope, so that another principal's use is refused and changes
// nothing.
//
// A tool call from a client that can be asked (MCP elicitation, see canAsk) and carries no
// token gets a question to its user instead of a challenge, bound as a token is, and the call
// that brings the answer back goes on only if the person approved that very call (answerOf).
// An operation registered with RequirePerson takes no token: a call that carries one, or
// that comes where no person can be asked, is refused with person_required.
func confirm(next handler) handler {
	return func(x *exchange) error {
		if !x.op.Confirm {
			return next(x)
		}
		cfg := &x.api.confirm
		scope := x.storeScope()
		token := x.r.Header.Get(remedy.HeaderConfirmationToken)
		s := askingOf(x)
		switch {
		case s != nil && s.answered:
			if err := x.answerOf(s); err != nil {
				return err
			}
			return next(x)
		case x.op.Person && token != "":
			return x.personRequired(true)
		case s != nil && s.can && token == "":
			return x.askPerson(s)
		case x.op.Person:
			return x.personRequired(false)
		}
		binding := x.binding()
		if token == "" {
			token = newToken()
			if err := cfg.Store.PutChallenge(x.ctx, scope, challengeID(token), binding, cfg.TTL); err != nil {
				return x.storeFailure("storing a confirmation challenge", err)
			}
			what := x.op.ID
			if x.op.Summary != "" {
				what += " (" + x.op.Summary + ")"
			}
			// The message says what waits and for how long; how to send the token back is the
			// code's hint, for the program — a model reading the message could not act on it.
			p := Error(CodeConfirmationRequired, what+" needs confirmation before it runs; a confirmation is good for this payload only, within "+fmtDuration(cfg.TTL))
			p.Hint = "If the user approves, send the identical call again with the token in " + x.tokenAt() + "."
			p.confirmationToken = token
			x.obs.confirm = ConfirmationIssued
			return p
		}
		invalid := Error(CodeConfirmationInvalid, "the confirmation token is unknown, expired, already used, or was issued for another caller, operation or payload; send the call without it for a new challenge")
		if len(token) > 256 {
			return invalid
		}
		got, ok, err := cfg.Store.TakeChallenge(x.ctx, scope, challengeID(token))
		switch {
		case err != nil:
			return x.storeFailure("taking a confirmation challenge", err)
		case !ok || subtle.ConstantTimeCompare(got, binding) != 1:
			return invalid
		}
		x.obs.confirm = ConfirmationUsed
		return next(x)
	}
}

// challengeID is the store key of a token: its hash, so that the store holds no usable token.
func challengeID(token string) string {
	h := sha256.Sum256([]byte(token))
	return "confirm:" + base64.RawURLEncoding.EncodeToString(h[:])
}

// binding is what a confirmation token is bound to: the principal, the operation and the
// payload's fingerprint.
func (x *exchange) binding() []byte {
	return hashParts(string(x.principal), x.op.ID, string(x.fingerprint()))
}
