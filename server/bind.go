package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/remedy-go/remedy"
)

// validate checks the whole input — body and parameters, as one object — against the
// operation's schema, and binds it into the operation's input type. Every violation is
// reported at once: 400 invalid_parameter when any concerns a path or query parameter,
// 422 invalid_body otherwise.
func validate(next handler) handler {
	return func(x *exchange) error {
		op := x.op
		inst, err := x.arguments()
		if err != nil {
			return err
		}
		if issues, violated := op.validator.validate(inst); len(issues) > 0 {
			return x.invalid(issues, violated)
		}
		in := reflect.New(op.in)
		if len(x.body) > 0 {
			if err := json.Unmarshal(x.body, in.Interface()); err != nil {
				return bindProblem(err)
			}
		}
		if err := setParams(in.Elem(), op.params, inst); err != nil {
			return err
		}
		x.input = in.Interface()
		return next(x)
	}
}

// arguments is the instance the schema checks: the body's object with the parameters
// added under their names. Parameter values are typed by their fields (a number for an int
// field) when the text allows it, and left as text otherwise, for the schema to report.
func (x *exchange) arguments() (any, error) {
	op := x.op
	if len(op.params) == 0 {
		if x.instance == nil {
			return map[string]any{}, nil
		}
		return x.instance, nil
	}
	obj, isObj := x.instance.(map[string]any)
	if x.instance == nil {
		obj, isObj = make(map[string]any, len(op.params)), true
	}
	if !isObj {
		return x.instance, nil // the schema reports a body that is not an object
	}
	var query url.Values
	var bad []remedy.Issue
	for i := range op.params {
		p := &op.params[i]
		if _, inBody := obj[p.Name]; inBody && x.instance != nil {
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
			obj[p.Name] = paramValue(p.Type, raw)
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
				obj[p.Name] = list
			} else {
				obj[p.Name] = paramValue(p.Type, vals[0])
			}
		}
	}
	if len(bad) > 0 {
		return nil, x.invalid(bad, nil)
	}
	return obj, nil
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
		if s != "" && jsonNumberSyntax(s) {
			return json.Number(s)
		}
	}
	return s
}

// invalid is the validation failure for issues.
func (x *exchange) invalid(issues []remedy.Issue, violated json.RawMessage) *Problem {
	code := CodeInvalidBody
	for _, is := range issues {
		if x.op.isParam(topName(is.Path)) {
			code = CodeInvalidParameter
			break
		}
	}
	var msg strings.Builder
	if len(issues) == 1 {
		msg.WriteString("1 issue: ")
	} else {
		msg.WriteString(strconv.Itoa(len(issues)) + " issues: ")
	}
	for i, is := range issues {
		if i == 3 {
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
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
}

// setParams sets the parameter fields from the validated instance.
func setParams(in reflect.Value, params []param, inst any) error {
	obj, _ := inst.(map[string]any)
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

type opKey struct{}

// OperationFrom returns the operation a handler's context is running.
func OperationFrom(ctx context.Context) *Operation {
	o, _ := ctx.Value(opKey{}).(*Operation)
	return o
}

// invoke runs the handler on the validated input and sends its result.
func invoke(x *exchange) error {
	ctx := context.WithValue(context.WithValue(x.ctx, principalKey{}, x.principal), opKey{}, x.op)
	out, err := x.op.call(ctx, x.input)
	if err != nil {
		return err
	}
	if x.op.Status == http.StatusNoContent {
		x.wrote = true
		x.w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return x.writeJSON(x.op.Status, out)
}
