package rewrite

import (
	"cmp"
	"encoding/json"
	"math/big"
	"slices"
	"strconv"
	"strings"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	jsk "github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/schemaissue"
)

// checkMaxIssues bounds the issues the check before sending lists (the server's bound).
const checkMaxIssues = 100

// checkMaxReceived bounds an issue's Received: a longer value is not repeated.
const checkMaxReceived = 1024

// schemaIssues turns the validator's complaint about the arguments (instance, as
// jsv.UnmarshalJSON decodes them) into issues as the reference server writes them, so that a
// rewriter reads both alike: Path a JSON Pointer into the arguments (the missing or unknown
// member itself for required and additional_properties), Code the keyword in snake_case
// (internal/schemaissue), Expected the type name for type and the violated keyword as a schema
// fragment otherwise ({"maximum":100}), AllowedValues for enum and const, Received the value
// that arrived. It offers no SuggestedValue: the rewriter repairs from the facts, each repair
// named by its own rule.
//
// It is the server's conversion, not its code: the server's (server/validate.go) is bound to
// its compiled-once index of every subschema, which it needs to inline the violated subschema
// and to suggest values, and which the client, holding the whole schema in Request.Schema,
// does without. The codes are shared (internal/schemaissue).
//
// The issues are sorted by Path (segment by segment, array indexes in numeric order), then
// Code: the validator visits an object's members in map order, and the same arguments must
// give the same issues, and so the same repair.
func schemaIssues(err *jsv.ValidationError, instance any) []remedy.Issue {
	var out []remedy.Issue
	collectIssues(&out, err, instance)
	slices.SortStableFunc(out, func(a, b remedy.Issue) int {
		if c := comparePaths(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Code, b.Code)
	})
	return out
}

// comparePaths orders JSON Pointers segment by segment, a parent before its members, numbers
// (array indexes) in numeric order and before names.
func comparePaths(a, b string) int {
	for a != "" && b != "" {
		var sa, sb string
		sa, a = nextSegment(a)
		sb, b = nextSegment(b)
		if sa == sb {
			continue
		}
		na, ea := strconv.Atoi(sa)
		nb, eb := strconv.Atoi(sb)
		switch {
		case ea == nil && eb == nil:
			return cmp.Compare(na, nb)
		case ea == nil:
			return -1
		case eb == nil:
			return 1
		}
		return strings.Compare(sa, sb)
	}
	return cmp.Compare(len(a), len(b))
}

// nextSegment splits "/a/b" into "a" (still escaped: order is all it is used for) and "/b".
func nextSegment(p string) (string, string) {
	p = p[1:]
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i:]
	}
	return p, ""
}

// collectIssues looks through groups and references: every other error is one issue (anyOf
// and oneOf too, whose branches' complaints contradict each other).
func collectIssues(out *[]remedy.Issue, e *jsv.ValidationError, instance any) {
	if len(*out) >= checkMaxIssues {
		return
	}
	switch e.ErrorKind.(type) {
	case *jsk.Schema, *jsk.Group, *jsk.Reference, *jsk.AllOf:
		for _, cause := range e.Causes {
			collectIssues(out, cause, instance)
		}
		return
	}
	path := tokensPointer(e.InstanceLocation)
	kw := schemaissue.Keyword(e.ErrorKind)
	add := func(is remedy.Issue) {
		if len(*out) < checkMaxIssues {
			*out = append(*out, is)
		}
	}
	member := func(name string) string { return appendPointer(path, name) }
	switch k := e.ErrorKind.(type) {
	case *jsk.Required:
		for _, m := range k.Missing {
			add(remedy.Issue{Path: member(m), Code: "required", Message: member(m) + " is required"})
		}
		return
	case *jsk.DependentRequired:
		for _, m := range k.Missing {
			add(remedy.Issue{Path: member(m), Code: "dependent_required", Message: member(m) + " is required with " + member(k.Prop)})
		}
		return
	case *jsk.Dependency:
		for _, m := range k.Missing {
			add(remedy.Issue{Path: member(m), Code: "dependencies", Message: member(m) + " is required with " + member(k.Prop)})
		}
		return
	case *jsk.AdditionalProperties:
		for _, p := range k.Properties {
			add(remedy.Issue{Path: member(p), Code: "additional_properties", Message: member(p) + " is not allowed",
				Received: receivedAt(instance, append(e.InstanceLocation[:len(e.InstanceLocation):len(e.InstanceLocation)], p))})
		}
		return
	}
	is := remedy.Issue{Path: path, Code: schemaissue.Code(e.ErrorKind, kw), Received: receivedAt(instance, e.InstanceLocation)}
	name := path
	if name == "" {
		name = "the arguments"
	}
	switch k := e.ErrorKind.(type) {
	case *jsk.Type:
		var want []string
		for _, t := range k.Want {
			if t != "null" {
				want = append(want, t)
			}
		}
		switch len(want) {
		case 0:
			is.Expected = json.RawMessage(`"null"`)
		case 1:
			is.Expected, _ = json.Marshal(want[0])
		default:
			is.Expected, _ = json.Marshal(want)
		}
		is.Message = name + " must be " + strings.Join(k.Want, " or ") + ", not " + k.Got
	case *jsk.Enum:
		for _, v := range k.Want {
			if b, err := json.Marshal(v); err == nil {
				is.AllowedValues = append(is.AllowedValues, b)
			}
		}
		is.Message = name + " must be one of " + valueList(is.AllowedValues)
	case *jsk.Const:
		if b, err := json.Marshal(k.Want); err == nil {
			is.AllowedValues = []json.RawMessage{b}
		}
		is.Message = name + " must be " + valueList(is.AllowedValues)
	case *jsk.Minimum:
		is.Expected, is.Message = boundIssue(kw, k.Want, name, " must be at least ")
	case *jsk.Maximum:
		is.Expected, is.Message = boundIssue(kw, k.Want, name, " must be at most ")
	case *jsk.ExclusiveMinimum:
		is.Expected, is.Message = boundIssue(kw, k.Want, name, " must be greater than ")
	case *jsk.ExclusiveMaximum:
		is.Expected, is.Message = boundIssue(kw, k.Want, name, " must be less than ")
	case *jsk.MultipleOf:
		is.Expected, is.Message = boundIssue(kw, k.Want, name, " must be a multiple of ")
	case *jsk.MinLength:
		is.Expected, is.Message = intIssue(kw, k.Want, name, " must be at least ", " characters long")
	case *jsk.MaxLength:
		is.Expected, is.Message = intIssue(kw, k.Want, name, " must be at most ", " characters long")
	case *jsk.MinItems:
		is.Expected, is.Message = intIssue(kw, k.Want, name, " must contain at least ", " items")
	case *jsk.MaxItems:
		is.Expected, is.Message = intIssue(kw, k.Want, name, " must contain at most ", " items")
	case *jsk.Pattern:
		is.Expected = fragment(kw, k.Want)
		is.Message = name + " must match the pattern " + k.Want
	case *jsk.Format:
		is.Expected = fragment(kw, k.Want)
		is.Message = name + " must be a valid " + k.Want
	case *jsk.FalseSchema:
		is.Message = name + " is not allowed"
	default:
		is.Message = name + " violates " + kw
		if kw == "" {
			is.Message = name + " violates the schema"
		}
	}
	add(is)
}

// tokensPointer writes the instance location as a JSON Pointer.
func tokensPointer(toks []string) string {
	p := ""
	for _, t := range toks {
		p = appendPointer(p, t)
	}
	return p
}

// receivedAt is the compact value at toks in instance, nil when there is none or it is longer
// than checkMaxReceived.
func receivedAt(instance any, toks []string) json.RawMessage {
	v := instance
	for _, t := range toks {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[t]; !ok {
				return nil
			}
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) > checkMaxReceived {
		return nil
	}
	return b
}

// boundIssue is a numeric bound as a schema fragment ({"maximum":100}) and the message that
// states it, the bound written exactly ("0.1", not the nearest float).
func boundIssue(kw string, want *big.Rat, name, says string) (json.RawMessage, string) {
	text := exactDecimal(want)
	if text == "" {
		return nil, name + " violates " + kw
	}
	return fragment(kw, json.Number(text)), name + says + text
}

func intIssue(kw string, want int, name, says, unit string) (json.RawMessage, string) {
	n := strconv.Itoa(want)
	return fragment(kw, want), name + says + n + unit
}

// exactDecimal is r as a JSON number, exactly; "" when it has no finite decimal form.
func exactDecimal(r *big.Rat) string {
	if r == nil {
		return ""
	}
	if r.IsInt() {
		return r.Num().String()
	}
	if n, exact := r.FloatPrec(); exact {
		return r.FloatString(n)
	}
	return ""
}

// fragment is {kw: v}.
func fragment(kw string, v any) json.RawMessage {
	b, err := json.Marshal(map[string]any{kw: v})
	if err != nil {
		return nil
	}
	return b
}

// valueList lists values as a message does: "red", "green" or "blue".
func valueList(vals []json.RawMessage) string {
	var b strings.Builder
	for i, v := range vals {
		switch {
		case i > 0 && i == len(vals)-1:
			b.WriteString(" or ")
		case i > 0:
			b.WriteString(", ")
		}
		b.Write(v)
	}
	return b.String()
}
