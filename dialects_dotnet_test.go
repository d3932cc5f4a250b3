package remedy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestASPNETTemplates reads ASP.NET's ValidationProblemDetails messages only when they are the
// DataAnnotations or System.Text.Json templates exactly, about the key's own field.
func TestASPNETTemplates(t *testing.T) {
	t.Parallel()
	cases := []struct {
		key, msg, code, expected string
	}{
		{"Name", "The Name field is required.", "required", ""},
		{"Quantity", "The field Quantity must be between 1 and 100.", "range", `{"minimum":1,"maximum":100}`},
		{"Price", "The field Price must be between 0.5 and 99.95.", "range", `{"minimum":0.5,"maximum":99.95}`},
		{"Lines[1].Sku", "The field Sku must be a string with a maximum length of 12.", "stringLength", `{"maxLength":12}`},
		{"Tags", "The field Tags must be a string or array type with a maximum length of '5'.", "maxLength", ""},
		{"Tags", "The field Tags must be a string or array type with a minimum length of '1'.", "minLength", ""},
		{"Code", "The field Code must match the regular expression '^[A-Z]{3}$'.", "regularExpression", `{"pattern":"^[A-Z]{3}$"}`},
		{"$.quantity", "The JSON value could not be converted to System.Int32. Path: $.quantity | LineNumber: 0 | BytePositionInLine: 17.", "type", `"integer"`},
		{"$.ok", "The JSON value could not be converted to System.Nullable`1[System.Boolean]. Path: $.ok | LineNumber: 0 | BytePositionInLine: 9.", "type", `"boolean"`},
		{"$.when", "The JSON value could not be converted to System.DateTime. Path: $.when | LineNumber: 0 | BytePositionInLine: 9.", "type", ""},

		// Near misses: another field's name, another wording, extra text, a bound that is no number.
		{"Name", "The Title field is required.", "", ""},
		{"Name", "The Name field is required!", "", ""},
		{"Name", "The Name field is required. Please fill it in.", "", ""},
		{"Quantity", "The field Quantity must be between one and 100.", "", ""},
		{"Quantity", "The field Quantity must be between 1 and 100", "", ""},
		{"Quantity", "Field Quantity must be between 1 and 100.", "", ""},
		{"Sku", "The field Sku must be a string with a maximum length of twelve.", "", ""},
		{"Code", "The field Code must match the regular expression ^[A-Z]$.", "", ""},
		{"$.quantity", "The JSON value could not be converted to System.Int32. Path: $.other | LineNumber: 0 | BytePositionInLine: 17.", "", ""},
		{"quantity", "The JSON value could not be converted to System.Int32. Path: quantity | LineNumber: 0 | BytePositionInLine: 17.", "", ""},
	}
	for _, c := range cases {
		body := fmt.Sprintf(`{"type":"https://tools.ietf.org/html/rfc9110#section-15.5.1","title":"One or more validation errors occurred.","status":400,"errors":{%q:[%q]}}`, c.key, c.msg)
		e, ok := remedy.Parse(400, nil, []byte(body))
		require.True(t, ok)
		require.Len(t, e.Issues, 1, c.msg)
		is := e.Issues[0]
		assert.Equal(t, c.code, is.Code, c.msg)
		assert.Equal(t, c.expected, string(is.Expected), c.msg)
		assert.Equal(t, "bad_request", e.Code, "a type URI naming an RFC's section is not a code")
	}
}

// TestASPNETParameterBesideJSONError: when the body did not deserialize, ASP.NET also says the
// action's parameter is missing, under the parameter's name; that names no member of the body.
func TestASPNETParameterBesideJSONError(t *testing.T) {
	t.Parallel()
	body := `{"title":"One or more validation errors occurred.","status":400,"errors":{"input":["The input field is required."],"$.quantity":["The JSON value could not be converted to System.Int32. Path: $.quantity | LineNumber: 0 | BytePositionInLine: 17."]}}`
	e, ok := remedy.Parse(400, nil, []byte(body))
	require.True(t, ok)
	require.Len(t, e.Issues, 1)
	assert.Equal(t, "/quantity", e.Issues[0].Path)
	// Without a JSON path among them, a key is the field it names.
	e, _ = remedy.Parse(400, nil, []byte(strings.Replace(body, `"$.quantity"`, `"Quantity"`, 1)))
	assert.Len(t, e.Issues, 2)
}

// TestProblemXML reads RFC 9457's XML form, and only in the problem namespace.
func TestProblemXML(t *testing.T) {
	t.Parallel()
	xml := `<?xml version="1.0" encoding="UTF-8"?><problem xmlns="urn:ietf:rfc:7807"><type>https://example.com/probs/out-of-credit</type><title>You do not have enough credit.</title><status>403</status><detail>Balance 30, cost 50.</detail></problem>`
	e, ok := remedy.Parse(400, nil, []byte(xml))
	require.True(t, ok)
	assert.Equal(t, remedy.DialectProblem, e.Dialect)
	assert.Equal(t, "out-of-credit", e.Code)
	assert.Equal(t, 400, e.Status, "the transport's status stands")
	assert.Equal(t, "Balance 30, cost 50.", e.Message)

	e, _ = remedy.Parse(403, nil, []byte(strings.Replace(xml, `urn:ietf:rfc:7807`, `urn:example:problem`, 1)))
	assert.Equal(t, remedy.DialectUnstructured, e.Dialect)
}

// TestSlackJSONPointers reads the member a Block Kit failure ends in, and nothing from a
// message that only looks like one.
func TestSlackJSONPointers(t *testing.T) {
	t.Parallel()
	cases := []struct{ msg, path string }{
		{"[ERROR] must be less than 3001 characters [json-pointer:/blocks/0/text/text]", "/blocks/0/text/text"},
		{"[ERROR] failed to match all allowed schemas [json-pointer:/blocks/1]", "/blocks/1"},
		{"[ERROR] must be less than 3001 characters [json-pointer:/blocks/0/text/text] (see docs)", "-"},
		{"[ERROR] must be less than 3001 characters [json-pointer:blocks/0]", "-"},
		{"[ERROR] must be less than 3001 characters [json-pointer:]", "-"},
		{"[ERROR] must be less than 3001 characters [pointer:/blocks/0]", "-"},
	}
	for _, c := range cases {
		body := fmt.Sprintf(`{"ok":false,"error":"invalid_blocks","response_metadata":{"messages":[%q]}}`, c.msg)
		e, ok := remedy.Parse(200, nil, []byte(body))
		require.True(t, ok)
		if c.path == "-" {
			assert.Empty(t, e.Issues, c.msg)
			continue
		}
		require.Len(t, e.Issues, 1, c.msg)
		assert.Equal(t, c.path, e.Issues[0].Path)
	}
}

// TestNumericCodes keeps an API's numeric code as text, and reads a number that is an HTTP
// status as the status it restates.
func TestNumericCodes(t *testing.T) {
	t.Parallel()
	e, _ := remedy.Parse(400, nil, []byte(`{"code":21211,"message":"Invalid 'To' Phone Number","more_info":"https://www.twilio.com/docs/errors/21211","status":400}`))
	assert.Equal(t, "21211", e.Code)
	assert.Equal(t, "https://www.twilio.com/docs/errors/21211", e.DocsURL)
	e, _ = remedy.Parse(400, nil, []byte(`{"code":-32602,"message":"Invalid params"}`))
	assert.Equal(t, "-32602", e.Code)
	e, _ = remedy.Parse(404, nil, []byte(`{"code":404,"message":"no such order"}`))
	assert.Equal(t, "not_found", e.Code, "a status restated is no code of its own")
	e, _ = remedy.Parse(400, nil, []byte(`{"code":20003,"message":"x","more_info":"not a link"}`))
	assert.Empty(t, e.DocsURL)
}
