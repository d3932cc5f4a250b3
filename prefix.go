package remedy

import (
	"strings"

	"github.com/remedy-go/remedy/internal/jsonscan"
	"github.com/remedy-go/remedy/internal/tape"
	"github.com/remedy-go/remedy/internal/waits"
)

// Reading a body cut at the bound. What arrived is not a JSON document, so the dialect readers
// cannot have it; but the members that decide a retry usually come first
// ({"error":{"code":...,"retryable":false,...), and classifying such a failure by its status
// alone would retry what the server said not to. prefixScan reads what arrived as the start of
// a JSON object and keeps only those members: the failure's code, its retry flag and waits,
// severity, category, message and type, at the top level or in the top-level "error" object.
//
// It trusts nothing the cut may have changed. A member counts only once the ',' or '}' after
// its value arrived (a "retry_after_ms": 12 cut from 1200 is not 12). Members nested deeper
// (inside issues, a schema, details) never count, whatever their names. A key stated twice
// makes its field unknown, as the full parse refuses such a body; two of a field's aliases
// that disagree (retryable true, is_retriable false) make it unknown too, since the full parse
// would take the last and the prefix may not hold it. Anything that is not the start of valid
// JSON (bad syntax, invalid UTF-8, nesting deeper than the full parse allows) makes the whole
// prefix unread. Issues are never read from a prefix: a partial list would mislead a rewriter.

// prefixField is a decision field a member of the prefix may state.
type prefixField uint8

const (
	pfNone     prefixField = iota
	pfCode                 // code, error_code, errorCode: the first non-empty one
	pfMessage              // message, detail, error_description: the first non-empty string
	pfType                 // type: an RFC 9457 URI, or a vendor's type word inside "error"
	pfStatus               // status inside "error": a google.rpc.Code name
	pfFlag                 // retryable, is_retriable, is_retryable, retriable
	pfMs                   // retry_after_ms, retryAfterMs
	pfSec                  // retry_after_seconds, retryAfterSeconds
	pfSeverity             // severity
	pfCategory             // category
	pfError                // the top level's "error": its members, when it is an object, are the failure's
)

// codeKey is the bit of the key "code", the one whose number inside "error" is a status.
const codeKey = 1 << 0

// prefixKey names the field a key states, and the key's own bit (for duplicates). inError says
// the key is a member of the "error" object.
func prefixKey(name string, inError bool) (prefixField, uint32) {
	switch name {
	case "code":
		return pfCode, codeKey
	case "error_code":
		return pfCode, 1 << 1
	case "errorCode":
		return pfCode, 1 << 2
	case "message":
		return pfMessage, 1 << 3
	case "detail":
		return pfMessage, 1 << 4
	case "error_description":
		return pfMessage, 1 << 5
	case "type":
		return pfType, 1 << 6
	case "retryable":
		return pfFlag, 1 << 7
	case "is_retriable":
		return pfFlag, 1 << 8
	case "is_retryable":
		return pfFlag, 1 << 9
	case "retriable":
		return pfFlag, 1 << 10
	case "retry_after_ms":
		return pfMs, 1 << 11
	case "retryAfterMs":
		return pfMs, 1 << 12
	case "retry_after_seconds":
		return pfSec, 1 << 13
	case "retryAfterSeconds":
		return pfSec, 1 << 14
	case "severity":
		return pfSeverity, 1 << 15
	case "category":
		return pfCategory, 1 << 16
	case "status":
		if inError {
			return pfStatus, 1 << 17
		}
	case "error":
		if !inError {
			return pfError, 1 << 18
		}
	}
	return pfNone, 0
}

// prefixLevel holds what the members of one object (the top level, or "error") stated.
type prefixLevel struct {
	keys    uint32 // the keys seen (prefixKey's bits)
	stated  uint16 // the fields stated, one bit per prefixField
	unknown uint16 // the fields stated in ways that cannot be trusted (a duplicate key, aliases that disagree)

	code, message, typ, status string
	severity                   Severity
	category                   Category
	flag                       int8
	ms, sec                    wait
}

// known reports whether f was stated, and trustworthily.
func (l *prefixLevel) known(f prefixField) bool {
	return (l.stated&^l.unknown)&(1<<f) != 0
}

// key records a key of the level, and reports whether it is a duplicate.
func (l *prefixLevel) key(f prefixField, bit uint32) bool {
	dup := l.keys&bit != 0
	l.keys |= bit
	if dup {
		l.unknown |= 1 << f
	}
	return dup
}

// prefixValue is a scalar value of a decision field, counted once the delimiter after it arrives.
type prefixValue struct {
	field prefixField // pfNone: no value pending
	err   bool        // a member of "error", not of the top level
	key   uint32      // the key's bit
	kind  tape.Kind
	raw   string // a string's body without its quotes, or a number's text
	esc   bool   // a string holding escapes
}

// text is the value as agentField's Text reads it: a string's value, a number's text, or "".
func (v *prefixValue) text() string {
	switch v.kind {
	case tape.String:
		if v.esc {
			return jsonscan.Unescape(v.raw)
		}
		return v.raw
	case tape.Number:
		return v.raw
	}
	return ""
}

// wait reads the value as waitFromJSON does.
func (v *prefixValue) wait(unit float64) wait {
	switch v.kind {
	case tape.Number, tape.String:
		return waits.FromFloat(waits.ParseFloat(v.text()), unit)
	}
	return wait{}
}

// commit applies a value whose delimiter arrived, by the rules the full parse reads the same
// member by (agentField, readErrorObj). full says the message is wanted. (The level is the
// receiver, not a pointer in v, so that the scan's state stays on the stack.)
func (l *prefixLevel) commit(v *prefixValue, full bool) {
	f := v.field
	bit := uint16(1) << f
	switch f {
	case pfCode:
		if v.kind == tape.Number && v.err && v.key == codeKey { // Google's HTTP status, which the transport's status already gives
			return
		}
		if l.stated&bit == 0 {
			if t := v.text(); t != "" {
				l.code = t
				l.stated |= bit
			}
		}
	case pfMessage:
		if v.kind == tape.String && v.raw != "" && l.stated&bit == 0 {
			if full {
				l.message = v.text()
			}
			l.stated |= bit
		}
	case pfType, pfStatus:
		if v.kind == tape.String {
			if f == pfType {
				l.typ = v.text()
			} else {
				l.status = v.text()
			}
			l.stated |= bit
		}
	case pfFlag:
		var flag int8
		switch v.kind {
		case tape.True:
			flag = 1
		case tape.False:
			flag = -1
		default:
			return // not a flag: the full parse ignores it too
		}
		if l.stated&bit != 0 && l.flag != flag {
			l.unknown |= bit
		}
		l.flag = flag
		l.stated |= bit
	case pfMs, pfSec:
		dst, unit := &l.ms, 1e6
		if f == pfSec {
			dst, unit = &l.sec, 1e9
		}
		w := v.wait(unit)
		if l.stated&bit != 0 && *dst != w {
			l.unknown |= bit
		}
		*dst = w
		l.stated |= bit
	case pfSeverity:
		l.severity = normSeverity(v.text())
		l.stated |= bit
	case pfCategory:
		l.category = normCategory(v.text())
		l.stated |= bit
	}
}

// prefixScan reads the decision members of a JSON object cut at an arbitrary byte.
type prefixScan struct {
	top, err prefixLevel
	inError  bool // the top level's "error" is an object: its members, not the top level's, are the failure's
}

// level is the object whose members describe the failure.
func (r *prefixScan) level() *prefixLevel {
	if r.inError {
		return &r.err
	}
	return &r.top
}

// scan reads s, the prefix of a body, and reports whether it is the start of a JSON object (a
// prefix that ends anywhere, or one whole object). full says the message is wanted.
func (r *prefixScan) scan(s string, full bool) bool {
	i := jsonscan.SkipWS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	var (
		arrays  uint64                  // bit d-1: the container at depth d is an array
		depth   = 1                     // open containers
		fields  [3]prefixField          // the field of the member being read, at depth 1 and 2
		keys    [3]uint32               // and its key's bit
		errObj  bool                    // the container at depth 2 is the top level's "error" object
		pending prefixValue             // the last scalar value of a decision field, until its delimiter
		lvl     *prefixLevel   = &r.top // whose members count at this depth, nil below
	)
	i++

open: // an object was opened: its closer, or a key
	if i = jsonscan.SkipWS(s, i); i >= len(s) {
		return true
	}
	if s[i] == '}' {
		i++
		goto closed
	}

key: // a key, its colon, then its value
	if i = jsonscan.SkipWS(s, i); i >= len(s) {
		return true
	}
	if s[i] != '"' {
		return false
	}
	{
		end, esc, st := jsonscan.StringPrefix(s, i+1)
		if st != jsonscan.Whole {
			return st == jsonscan.Cut
		}
		if lvl != nil {
			name := s[i+1 : end-1]
			if esc {
				name = unescapeKey(name)
			}
			f, bit := prefixKey(name, lvl == &r.err)
			fields[depth], keys[depth] = f, bit
			if f != pfNone && lvl.key(f, bit) && f == pfError {
				return false // two "error" members: which one is the failure?
			}
		}
		if i = jsonscan.SkipWS(s, end); i >= len(s) {
			return true
		}
		if s[i] != ':' {
			return false
		}
		i++
	}

value: // a value: a member's or an element's
	if i = jsonscan.SkipWS(s, i); i >= len(s) {
		return true
	}
	{
		f, key := pfNone, uint32(0)
		if lvl != nil {
			f, key = fields[depth], keys[depth] // lvl is only ever an object's: depth 1, or "error" at depth 2
		}
		switch c := s[i]; c {
		case '{', '[':
			if depth == tape.MaxDepth {
				return false
			}
			depth++
			if c == '[' {
				arrays |= 1 << (depth - 1)
			} else {
				arrays &^= 1 << (depth - 1)
			}
			switch {
			case f == pfError && c == '{':
				errObj, r.inError, lvl = true, true, &r.err
			case f != pfNone && f != pfError:
				// A container where a scalar decides: the field cannot be read.
				lvl.unknown |= 1 << f
				lvl = nil
			default:
				lvl = nil
			}
			i++
			if c == '{' {
				goto open
			}
			if i = jsonscan.SkipWS(s, i); i >= len(s) {
				return true
			}
			if s[i] == ']' {
				i++
				goto closed
			}
			goto value
		case '"':
			end, esc, st := jsonscan.StringPrefix(s, i+1)
			if st != jsonscan.Whole {
				return st == jsonscan.Cut
			}
			if f != pfNone {
				pending = prefixValue{field: f, err: lvl == &r.err, key: key, kind: tape.String, raw: s[i+1 : end-1], esc: esc}
			}
			i = end
		case 't', 'f', 'n':
			lit, k := "null", tape.Null
			if c == 't' {
				lit, k = "true", tape.True
			} else if c == 'f' {
				lit, k = "false", tape.False
			}
			if !strings.HasPrefix(s[i:], lit) {
				if strings.HasPrefix(lit, s[i:]) {
					return true
				}
				return false
			}
			if f != pfNone {
				pending = prefixValue{field: f, err: lvl == &r.err, key: key, kind: k}
			}
			i += len(lit)
		default:
			end, ok := jsonscan.Number(s, i)
			if end-i > tape.MaxNumberLen {
				return false
			}
			if end >= len(s) {
				return true // the number may go on past the cut
			}
			if !ok {
				return false
			}
			if f != pfNone {
				pending = prefixValue{field: f, err: lvl == &r.err, key: key, kind: tape.Number, raw: s[i:end]}
			}
			i = end
		}
		goto next
	}

closed: // a container closed at s[i-1]
	depth--
	switch depth {
	case 0:
		// The whole object arrived; only whitespace may follow it.
		return jsonscan.SkipWS(s, i) == len(s)
	case 1:
		errObj, lvl = false, &r.top
	case 2:
		if errObj {
			lvl = &r.err
		}
	}

next: // after a value: a comma and more, or the container's closer
	if i = jsonscan.SkipWS(s, i); i >= len(s) {
		return true // the pending value's delimiter did not arrive: it may go on
	}
	{
		closer := byte('}')
		if arrays&(1<<(depth-1)) != 0 {
			closer = ']'
		}
		if c := s[i]; c != ',' && c != closer {
			return false
		}
		if pending.field != pfNone {
			if pending.err {
				r.err.commit(&pending, full)
			} else {
				r.top.commit(&pending, full)
			}
			pending.field = pfNone
		}
		if s[i] == closer {
			i++
			goto closed
		}
		i++
		if closer == ']' {
			goto value
		}
		goto key
	}
}

// unescapeKey is the value of a key spelled with escapes; one too long to be a decision key is
// left as it is (it matches none).
func unescapeKey(raw string) string {
	if len(raw) > 6*len("retry_after_seconds") {
		return raw
	}
	return jsonscan.Unescape(raw)
}

// readPrefix reads a failure's body cut at the bound (see prefixScan) into the envelope, by
// the rules the dialect readers apply to the same members. It returns DialectTruncated when
// the prefix stated anything that decides, and "" (the body is then unstructured) otherwise.
func (p *parser) readPrefix(s string) Dialect {
	var r prefixScan
	if !r.scan(s, p.full) {
		return ""
	}
	l := r.level()
	e := &p.e
	found := false
	if l.known(pfCode) {
		e.Code, found = l.code, true
	}
	if r.inError {
		if e.Code == "" && l.known(pfStatus) && isUpperSnake(l.status) { // google.rpc.Status
			e.Code, found = l.status, true
		}
		if l.known(pfType) && l.typ != "" {
			found = true
			switch {
			case isURI(l.typ):
				e.Type = l.typ
			case e.Code == "": // Anthropic, OpenAI, Stripe: the type is the code when none is given
				e.Code = l.typ
			default:
				p.related(l.typ, true)
			}
		}
	} else if l.known(pfType) && isURI(l.typ) && l.typ != "about:blank" { // RFC 9457
		e.Type, found = l.typ, true
		if e.Code == "" {
			e.Code = lastSegment(l.typ)
		}
	}
	if l.known(pfMessage) {
		e.Message, found = l.message, true
	}
	if l.known(pfFlag) {
		p.facts.flag, found = l.flag, true
	}
	if l.known(pfMs) {
		p.facts.bodyMs, found = l.ms, true
	}
	if l.known(pfSec) {
		p.facts.bodySec, found = l.sec, true
	}
	if l.known(pfSeverity) {
		e.Severity, found = l.severity, true
	}
	if l.known(pfCategory) {
		e.Category, found = l.category, true
	}
	if !found {
		return ""
	}
	return DialectTruncated
}
