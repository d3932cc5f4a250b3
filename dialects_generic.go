package remedy

import (
	"strings"

	"github.com/remedy-go/remedy/internal/tape"
)

// Failures of no known family: the members most frameworks use for a message, a code and a
// list of field errors.

func (p *parser) readGenericJSON() Dialect {
	t := &p.top
	if p.status < 400 && !(p.status == 0 && pydanticList(t.detail)) {
		// Without a status (an MCP tool's structuredContent), only a shape no success has.
		return ""
	}
	e := &p.e
	found := false
	if m := t.message; m.IsString() {
		e.Message, found = m.Str(), true
	} else if m.IsArray() { // NestJS: a list of validation messages (class-validator's)
		for it := m.Iter(); it.Next(); {
			if e.Message == "" {
				e.Message = it.Val().Str()
			}
			p.classValidatorIssue(it.Val().Str())
		}
		found = e.Message != ""
	}
	if m := t.message; m.Str() == "Validation failed" { // celebrate's errors()
		p.celebrateIssues(t.root.Member("validation"))
	}
	if er := t.error; er.IsString() {
		if e.Message == "" {
			e.Message = er.Str()
		}
		e.Code, found = snakeWords(er.Str()), true
	} else if p.zodResult(er) { // @hono/zod-validator's default hook
		p.zodError(er)
		found = true
	}
	if m := t.errorMessage; m.IsString() && e.Message == "" { // ogen
		e.Message, found = m.Str(), true
	}
	if d := t.detail; d.IsString() {
		e.Message, found = d.Str(), true
	} else if d.IsArray() { // FastAPI / pydantic
		p.issues(d)
		e.Message = d.Member("0").Member("msg").Str()
		found = true
		if pydanticList(d) {
			e.Category = CategoryValidation // FastAPI's RequestValidationError, whatever the status
			if p.status < 400 {
				e.Code = "validation_error" // carried without the 422 (an MCP tool's result)
			}
		}
	}
	if errs := t.errors; errs.IsObject() { // Rails / Laravel: {"field": ["message", ...]}
		p.fieldMessages(errs)
		found = true
	} else if errs.IsArray() && p.nodeErrors(errs) { // express-openapi-validator, express-validator
		found = true
	}
	p.setStatus(t.status)
	p.setStatus(t.statusCode)
	switch c := t.code; {
	case c.IsString():
		e.Code = c.Str()
		if e.Code == "FST_ERR_VALIDATION" {
			p.fastifyIssue(t.message.Str())
		}
	case c.IsNumber():
		if code := p.numericCode(c); code != "" {
			e.Code = code
		}
	}
	if u := t.moreInfo.Str(); isURI(u) { // Twilio's page for its code
		e.DocsURL = u
	}
	if !found {
		*e = Envelope{}
		p.facts, p.bodyStatus = retryFacts{}, 0
		return ""
	}
	if p.goText(e.Message) && !t.code.IsString() { // gin's, echo's and ogen's defaults: a Go validator's or decoder's text
		e.Code = "" // the words of the text are not a code
	}
	return DialectGenericJSON
}

// pydanticList reports whether v is a list of pydantic validation errors: [{loc, msg, type}].
func pydanticList(v tape.Val) bool {
	x := v.Member("0")
	return v.IsArray() && x.Member("loc").IsArray() && x.Member("msg").IsString() && x.Member("type").IsString()
}

// fieldMessages reads a map of field names to lists of messages: Rails', Laravel's and
// ASP.NET's ValidationProblemDetails ({"Quantity": ["The field Quantity must be between 1 and
// 100."]}). The key is the field as the server names it; ASP.NET's JSON errors key it by JSON
// path ("$.lines[1].quantity"). A message that is a sentence is the top-level message as it
// is; a fragment ("can't be blank") is said of its field.
//
// When a JSON path key is among them the body did not deserialize, and ASP.NET then also
// reports the action's parameter as missing ("The input field is required.", keyed by the
// parameter's name): those keys name no member of the body and are not read as fields.
func (p *parser) fieldMessages(errs tape.Val) {
	e := &p.e
	jsonPaths := false
	for it := errs.Iter(); it.Next(); {
		jsonPaths = jsonPaths || strings.HasPrefix(it.Key(), "$")
	}
	for it := errs.Iter(); it.Next(); {
		k := it.Key()
		if jsonPaths && !strings.HasPrefix(k, "$") {
			continue
		}
		for m := it.Val().Iter(); m.Next(); {
			if !p.full {
				p.unread, p.kept = true, true
				continue
			}
			msg := m.Val().Text()
			is := Issue{Path: toPointer(k), Message: msg}
			p.dotnetFacts(&is, k)
			p.addIssue(is)
			if e.Message == "" {
				if msg != "" && msg[0] >= 'A' && msg[0] <= 'Z' {
					e.Message = msg
				} else {
					e.Message = k + " " + msg
				}
			}
		}
	}
}
