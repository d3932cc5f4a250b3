package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/jsonscan"
)

// validate checks the whole input — body and parameters, as one object — against the
// operation's schema, and binds it into the operation's input type. Every violation is
// reported at once: 400 invalid_parameter when any concerns a path or query parameter,
// 422 invalid_body otherwise; 400 invalid_json for a body that is not JSON, or that names one
// member twice in an object.
//
// A valid body is accepted by a check over its text (fastCheck.acceptsText) before anything is
// decoded from it, and then decoded once, into the input type. An invalid one is most often
// explained by the same walk over its text (validator.explainText); only the rest is decoded
// for the full validator, which says what is wrong.
func validate(next handler) handler {
	return func(x *exchange) error {
		op := x.op
		if len(x.body) > 0 && op.validator.fast != nil {
			if params, present, ok := x.fastParams(); ok {
				body, withParams := x.text, len(op.params) > 0
				if op.validator.fast.acceptsText(body, present, withParams) {
					return x.bind(params, next)
				}
				if issues, violated, total, atLeast, ok := op.validator.explainText(body, present, withParams, countValues(params)); ok {
					return x.invalidOf(issues, violated, total, atLeast)
				}
			}
		}
		inst, err := x.arguments()
		if err != nil {
			return err
		}
		if issues, violated, total, atLeast := op.validator.check(inst); len(issues) > 0 {
			return x.invalidOf(issues, violated, total, atLeast)
		}
		obj, _ := inst.(map[string]any)
		return x.bind(obj, next)
	}
}

// bind decodes the valid input into the operation's input type, with the parameters' values
// from params, and goes on.
func (x *exchange) bind(params map[string]any, next handler) error {
	op := x.op
	in := reflect.New(op.in)
	if len(x.body) > 0 && (op.binder == nil || !op.binder.bind(x.text, in.Elem())) {
		in = reflect.New(op.in) // what the binder left is thrown away
		err := json.Unmarshal(x.body, in.Interface())
		if err != nil {
			// JSON Schema counts 1e2 and 100.0 as integers, which encoding/json will not put
			// in an int: bind them written as integers.
			if plain, ok := integralNumbers(x.body); ok {
				in = reflect.New(op.in)
				err = json.Unmarshal(plain, in.Interface())
			}
		}
		if err != nil {
			return bindProblem(err)
		}
	}
	if err := setParams(in.Elem(), op.params, params); err != nil {
		return err
	}
	x.input = in.Interface()
	return next(x)
}

// integralNumbers rewrites a body's integral numbers written with a fraction or an exponent
// (1e2, 100.0, -2.5e1... when whole) as plain integers, and reports whether it changed any.
// Numbers beyond ±2^53 are left as they are: a double cannot say which integer they are.
func integralNumbers(body []byte) ([]byte, bool) {
	v, err := decodeBody(body)
	if err != nil {
		return nil, false
	}
	changed := false
	var walk func(v any, depth int) any
	walk = func(v any, depth int) any {
		if depth > maxBindDepth {
			return v
		}
		switch x := v.(type) {
		case json.Number:
			if !strings.ContainsAny(string(x), ".eE") {
				return x
			}
			f, err := strconv.ParseFloat(string(x), 64)
			if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return x
			}
			changed = true
			return json.Number(strconv.FormatInt(int64(f), 10))
		case []any:
			for i, e := range x {
				x[i] = walk(e, depth+1)
			}
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e, depth+1)
			}
		}
		return v
	}
	v = walk(v, 0)
	if !changed {
		return nil, false
	}
	out, err := json.Marshal(v)
	return out, err == nil
}

// maxBindDepth bounds the walk of integralNumbers; the validator refuses deeper bodies anyway.
const maxBindDepth = 64

// fastParams reads the request's parameters for the text check: their values, the bits of the
// required ones present, and whether every one is surely valid.
func (x *exchange) fastParams() (map[string]any, uint64, bool) {
	if len(x.op.params) == 0 {
		return nil, 0, true
	}
	vals := make(map[string]any, len(x.op.params))
	if bad := x.params(vals, nil); len(bad) > 0 {
		return nil, 0, false
	}
	root := x.op.validator.fast
	var present uint64
	for name, v := range vals {
		p := root.props[name]
		if p.check == nil || !p.check.accepts(v) {
			return nil, 0, false
		}
		present |= p.bit
	}
	return vals, present, true
}

// countValues counts the values parameters add to the instance: one each, and one for each
// element of a list.
func countValues(params map[string]any) int {
	n := 0
	for _, v := range params {
		n++
		if list, ok := v.([]any); ok {
			n += len(list)
		}
	}
	return n
}

// arguments is the instance the schema checks: the body decoded (numbers as json.Number), an
// object with the parameters added under their names.
func (x *exchange) arguments() (any, error) {
	var body any
	if len(x.body) > 0 {
		var err error
		if body, err = decodeBody(x.body); err != nil {
			return nil, err
		}
	}
	op := x.op
	if len(op.params) == 0 {
		if body == nil {
			return map[string]any{}, nil
		}
		return body, nil
	}
	if body == nil {
		obj := make(map[string]any, len(op.params))
		if bad := x.params(obj, nil); len(bad) > 0 {
			return nil, x.invalid(bad, nil)
		}
		return obj, nil
	}
	obj, isObj := body.(map[string]any)
	if !isObj {
		return body, nil // the schema reports a body that is not an object
	}
	if bad := x.params(obj, obj); len(bad) > 0 {
		return nil, x.invalid(bad, nil)
	}
	return obj, nil
}

// params adds the request's parameters to dst under their names, typed by their fields (a
// number for an int field) when the text allows it and left as text otherwise, for the schema
// to report. It returns the issues of those that cannot be read, and of those that body (the
// decoded body, when there is one) holds as a member too.
func (x *exchange) params(dst, body map[string]any) []remedy.Issue {
	var query url.Values
	var bad []remedy.Issue
	for i := range x.op.params {
		p := &x.op.params[i]
		if _, inBody := body[p.Name]; inBody {
			bad = append(bad, remedy.Issue{Path: "/" + pointerEscape(p.Name), Code: "parameter_in_body",
				Message: p.Name + " is a " + p.In + " parameter: send it in the URL, not in the body"})
			continue
		}
		switch p.In {
		case "path":
			raw, err := url.PathUnescape(x.pathVals[x.op.pathIndex(p.Name)])
			if err != nil {
				bad = append(bad, remedy.Issue{Path: "/" + pointerEscape(p.Name), Code: "invalid_escape",
					Message: p.Name + " is not a valid URL path segment"})
				continue
			}
			dst[p.Name] = paramValue(p.Type, raw)
		case "query":
			if query == nil {
				query = x.r.URL.Query()
			}
			vals, ok := query[p.Name]
			if !ok {
				continue
			}
			if t := schemaDeref(p.Type); t.Kind() == reflect.Slice {
				list := make([]any, 0, len(vals))
				for _, v := range vals {
					list = append(list, paramValue(t.Elem(), v))
				}
				dst[p.Name] = list
			} else {
				dst[p.Name] = paramValue(p.Type, vals[0])
			}
		}
	}
	return bad
}

// pathIndex is the position of a path parameter among the route's parameters.
func (o *Operation) pathIndex(name string) int {
	n := 0
	for _, s := range o.route {
		if s.param == name {
			return n
		}
		if s.param != "" {
			n++
		}
	}
	return -1
}

// paramValue types a parameter's text by its field's kind, when the text allows it.
func paramValue(t reflect.Type, s string) any {
	switch schemaDeref(t).Kind() {
	case reflect.Bool:
		if b, err := strconv.ParseBool(s); err == nil {
			return b
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		if s != "" && jsonscan.IsNumber(s) {
			return json.Number(s)
		}
	}
	return s
}

// invalid is the validation failure for issues.
func (x *exchange) invalid(issues []remedy.Issue, violated json.RawMessage) *Problem {
	return x.invalidOf(issues, violated, len(issues), false)
}

// invalidOf is the validation failure for issues, which are the first of total, or of at least
// total (the last of them then counts the others, see TooManyIssues).
func (x *exchange) invalidOf(issues []remedy.Issue, violated json.RawMessage, total int, atLeast bool) *Problem {
	code := CodeInvalidBody
	for _, is := range issues {
		if x.op.isParam(topName(is.Path)) {
			code = CodeInvalidParameter
			break
		}
	}
	var msg strings.Builder
	size := len("at least 1000 issues: ; …")
	for i := range min(len(issues), 3) {
		size += len(issues[i].Message) + 2
	}
	msg.Grow(size)
	if atLeast {
		msg.WriteString("at least ")
	}
	if total == 1 {
		msg.WriteString("1 issue: ")
	} else {
		var nb [20]byte
		msg.Write(strconv.AppendInt(nb[:0], int64(total), 10))
		msg.WriteString(" issues: ")
	}
	for i, is := range issues {
		if i == 3 || is.Code == TooManyIssues {
			msg.WriteString("; …")
			break
		}
		if i > 0 {
			msg.WriteString("; ")
		}
		msg.WriteString(is.Message)
	}
	p := Error(code, msg.String())
	p.Issues, p.Schema = issues, violated
	p.made = x.op.validator.plain
	return p
}

func (o *Operation) isParam(name string) bool {
	for _, p := range o.params {
		if p.Name == name {
			return true
		}
	}
	return false
}

// topName is the first token of a JSON Pointer, unescaped.
func topName(ptr string) string {
	if ptr == "" {
		return ""
	}
	tok, _ := pointerFirst(ptr)
	return pointerUnescape(tok)
}

// setParams sets the parameter fields from their validated values.
func setParams(in reflect.Value, params []param, obj map[string]any) error {
	for _, p := range params {
		v, ok := obj[p.Name]
		if !ok {
			continue
		}
		f := fieldAlloc(in, p.Index)
		if err := setValue(f, v); err != nil {
			return Error(CodeInvalidParameter, p.Name+": "+err.Error()).with(remedy.Issue{
				Path: "/" + pointerEscape(p.Name), Code: "out_of_range", Message: p.Name + ": " + err.Error()})
		}
	}
	return nil
}

// fieldAlloc is the field at index, allocating the embedded struct pointers on the way.
func fieldAlloc(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

func (p *Problem) with(issues ...remedy.Issue) *Problem {
	p.Issues = append(p.Issues, issues...)
	return p
}

// setValue stores a validated JSON value (string, bool, json.Number or a list of them) in a
// field of a parameter type.
func setValue(f reflect.Value, v any) error {
	if f.Kind() == reflect.Pointer {
		n := reflect.New(f.Type().Elem())
		if err := setValue(n.Elem(), v); err != nil {
			return err
		}
		f.Set(n)
		return nil
	}
	switch f.Kind() {
	case reflect.Slice:
		list, _ := v.([]any)
		s := reflect.MakeSlice(f.Type(), len(list), len(list))
		for i, e := range list {
			if err := setValue(s.Index(i), e); err != nil {
				return err
			}
		}
		f.Set(s)
		return nil
	case reflect.String:
		s, _ := v.(string)
		f.SetString(s)
		return nil
	case reflect.Bool:
		b, _ := v.(bool)
		f.SetBool(b)
		return nil
	}
	n, _ := v.(json.Number)
	switch f.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || f.OverflowInt(i) {
			return fmt.Errorf("%s is out of range for a %s", n, f.Type())
		}
		f.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u, err := strconv.ParseUint(string(n), 10, 64)
		if err != nil || f.OverflowUint(u) {
			return fmt.Errorf("%s is out of range for a %s", n, f.Type())
		}
		f.SetUint(u)
	case reflect.Float32, reflect.Float64:
		x, err := strconv.ParseFloat(string(n), 64)
		if err != nil || f.OverflowFloat(x) {
			return fmt.Errorf("%s is out of range for a %s", n, f.Type())
		}
		f.SetFloat(x)
	default:
		return fmt.Errorf("unsupported parameter type %s", f.Type())
	}
	return nil
}

// bindProblem reports a body the schema accepted but the Go type cannot hold (a number out
// of an int8's range, say).
func bindProblem(err error) *Problem {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		ptr := ""
		if te.Field != "" {
			ptr = "/" + strings.ReplaceAll(pointerEscape(te.Field), ".", "/")
		}
		msg := strings.TrimPrefix(ptr, "/") + " cannot hold " + te.Value
		return Error(CodeInvalidBody, msg).with(remedy.Issue{Path: ptr, Code: "out_of_range", Message: msg})
	}
	return Error(CodeInvalidBody, "the body does not match the operation's input")
}

// exchangeKey is the context key of the exchange a handler runs in, which PrincipalFrom and
// OperationFrom read.
type exchangeKey struct{}

// OperationFrom returns the operation a handler's context is running.
func OperationFrom(ctx context.Context) *Operation {
	if x, ok := ctx.Value(exchangeKey{}).(*exchange); ok {
		return x.op
	}
	return nil
}

// invoke runs the handler on the validated input and sends its result.
func invoke(x *exchange) error {
	ctx := context.WithValue(x.ctx, exchangeKey{}, x)
	out, err := x.op.call(ctx, x.input)
	if err != nil {
		return err
	}
	if x.op.Status == http.StatusNoContent {
		x.record(http.StatusNoContent, nil)
		x.wrote = true
		x.w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return x.writeJSON(x.op.Status, out)
}
