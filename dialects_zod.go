package remedy

import (
	"encoding/json"
	"strings"

	"github.com/remedy-go/remedy/internal/tape"
)

// Zod's issues, as the TypeScript MCP SDK reports invalid tool arguments.

// zodMarker starts the part of the TypeScript MCP SDK's validation error that names the tool;
// after the tool's name and ": " come zod's issues: a JSON array (SDK 1.17 to 1.2x, zod 3's
// message) or one "message at path" line each (later SDKs).
const zodMarker = "Invalid arguments for tool "

// zodIssues reads the zod issues of such a message into issues; it reports whether msg was
// one.
func (p *parser) zodIssues(msg string) bool {
	i := strings.Index(msg, zodMarker)
	if i < 0 {
		return false
	}
	rest := msg[i+len(zodMarker):]
	j := strings.Index(rest, ": ")
	if j < 0 {
		return false
	}
	rest = strings.TrimSpace(rest[j+2:])
	if !p.full {
		p.unread = true
		return true
	}
	if strings.HasPrefix(rest, "[") {
		t := tape.Get()
		if t.Parse(rest) {
			p.zodList(t.Root())
		}
		tape.Put(t)
		return true
	}
	for _, line := range strings.Split(rest, "\n") {
		is := Issue{Message: line}
		if k := strings.LastIndex(line, " at "); k >= 0 {
			is.Message = line[:k]
			if path := line[k+len(" at "):]; path != "object root" {
				is.Path = toPointer(path)
			}
		}
		p.zod4Facts(&is)
		p.addIssue(is)
	}
	return true
}

// zod4Facts reads what zod 4's English messages state (zod/v4/locales/en) into the issue: the
// code, and the type, allowed values, bound or pattern the field must meet.
func (p *parser) zod4Facts(is *Issue) {
	msg := is.Message
	switch {
	case strings.HasPrefix(msg, "Invalid input: expected "):
		rest := msg[len("Invalid input: expected "):]
		if typ, _, ok := strings.Cut(rest, ", received "); ok && isWord(typ) {
			is.Code, is.Expected = "invalid_type", quoteJSON(typ)
		} else if v := zodLiteral(rest); v != nil {
			is.Code = "invalid_value"
			if p.full {
				is.AllowedValues = []json.RawMessage{v}
			}
		}
	case strings.HasPrefix(msg, "Invalid option: expected one of "):
		is.Code = "invalid_value"
		parts := strings.Split(msg[len("Invalid option: expected one of "):], "|")
		values := make([]json.RawMessage, 0, len(parts))
		for _, s := range parts {
			v := zodLiteral(s)
			if v == nil {
				return // a value holding "|", say: better none than wrong ones
			}
			values = append(values, v)
		}
		if p.full {
			is.AllowedValues = values
		}
	case strings.HasPrefix(msg, "Too big: expected "), strings.HasPrefix(msg, "Too small: expected "):
		small := strings.HasPrefix(msg, "Too small")
		is.Code = "too_big"
		if small {
			is.Code = "too_small"
		}
		rest := msg[strings.Index(msg, "expected ")+len("expected "):]
		origin, rest, _ := strings.Cut(rest, " ")
		sized := strings.HasPrefix(rest, "to have ") // a length: strings, arrays, sets
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, "to have "), "to be ")
		op := strings.TrimRight(rest[:len(rest)-len(strings.TrimLeft(rest, "<>="))], " ")
		num, _, _ := strings.Cut(rest[len(op):], " ")
		if !tape.IsNumber(num) || (op != "<=" && op != ">=" && op != "<" && op != ">") {
			return
		}
		numeric := origin == "number" || origin == "int" || origin == "bigint"
		if keyword := zodKeyword(origin, small, op == "<" || op == ">"); keyword != "" && sized != numeric {
			is.Expected = p.fragment(keyword, json.RawMessage(num))
		}
	case strings.HasPrefix(msg, "Invalid string: must match pattern /"):
		is.Code = "invalid_format"
		re := msg[len("Invalid string: must match pattern "):]
		if len(re) >= 2 && re[len(re)-1] == '/' { // a RegExp's source, without flags
			is.Expected = p.fragment("pattern", quoteJSON(re[1:len(re)-1]))
		}
	case strings.HasPrefix(msg, "Unrecognized key"):
		is.Code = "unrecognized_keys"
	}
}

// zodLiteral is a value as zod 4 prints it in a message (stringifyPrimitive): a string in
// double quotes (not escaped), a number, true, false or null; nil for anything else.
func zodLiteral(s string) json.RawMessage {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		if inner := s[1 : len(s)-1]; !strings.ContainsAny(inner, "\"\\") {
			return quoteJSON(inner)
		}
		return nil
	}
	if tape.IsNumber(s) || s == "true" || s == "false" || s == "null" {
		return json.RawMessage(s)
	}
	return nil
}

// isWord reports whether s is a lower-case type name, as zod prints one.
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// zodList reads zod's issues: zod 3's {code, message, path, expected, received, options,
// minimum, maximum, type}, and zod 4's, which name the type origin and an enum's values. An
// invalid_type's received is a type name, not the value, so it is not kept.
func (p *parser) zodList(v tape.Val) {
	for it := v.Iter(); it.Next(); {
		x := it.Val()
		if !x.IsObject() {
			continue
		}
		is := Issue{Path: arrayPointer(x.Member("path")), Code: x.Member("code").Str(), Message: x.Member("message").Str()}
		switch is.Code {
		case "invalid_type":
			// zod 3 names an enum or a literal it expected by its values ("'a' | 'b'"):
			// only a JSON type name is an expected type.
			if exp := x.Member("expected"); jsonType(exp.Str()) {
				is.Expected = p.raw(exp)
			}
		case "invalid_enum_value", "invalid_literal":
			is.Received = p.raw(x.Member("received"))
			is.AllowedValues = p.rawList(x.Member("options"))
		case "invalid_value": // zod 4's enum and literal
			is.AllowedValues = p.rawList(x.Member("values"))
		case "too_small", "too_big":
			is.Expected = p.zodBound(x, is.Code == "too_small")
		}
		p.addIssue(is)
	}
}

// zodKeyword is the JSON Schema keyword of a zod bound (small: a lower one) on a value of type
// typ, as zod names types: minimum or maximum for numbers, exclusive ones when the bound is;
// minLength/maxLength for strings, minItems/maxItems for arrays and sets; "" otherwise (an
// exclusive length is not one JSON Schema can state).
func zodKeyword(typ string, small, exclusive bool) string {
	var lo, hi string
	switch typ {
	case "number", "int", "bigint":
		lo, hi = "minimum", "maximum"
		if exclusive {
			lo, hi = "exclusiveMinimum", "exclusiveMaximum"
		}
	case "string":
		lo, hi = "minLength", "maxLength"
	case "array", "set":
		lo, hi = "minItems", "maxItems"
	}
	if exclusive && lo != "exclusiveMinimum" {
		return ""
	}
	if small {
		return lo
	}
	return hi
}

// zodBound is zod's bound as a schema fragment: minimum or maximum (exclusive when not
// inclusive) for numbers, minLength/maxLength for strings, minItems/maxItems for arrays.
func (p *parser) zodBound(x tape.Val, small bool) json.RawMessage {
	bound := x.Member("maximum")
	if small {
		bound = x.Member("minimum")
	}
	if !bound.IsNumber() {
		return nil
	}
	typ := x.Member("type").Str()
	if typ == "" {
		typ = x.Member("origin").Str() // zod 4
	}
	keyword := zodKeyword(typ, small, x.Member("inclusive").Kind() == tape.False)
	if keyword == "" {
		return nil
	}
	return p.fragment(keyword, p.raw(bound))
}
