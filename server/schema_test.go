package server

import (
	"encoding/json"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vtItem is one line of vtOrder, the realistic input the validation tests share.
type vtItem struct {
	SKU      string `json:"sku" schema:"pattern=^sku_[a-z0-9]+$"`
	Quantity int    `json:"quantity" schema:"minimum=1;maximum=100"`
}

// vtOrder is the order: a path parameter, a query parameter and a body with a constraint of
// every kind.
type vtOrder struct {
	ID         string   `path:"id" json:"-" schema:"pattern=^ord_"`
	Limit      int      `query:"limit,omitempty" json:"-" schema:"minimum=1;maximum=50"`
	CustomerID string   `json:"customer_id" schema:"pattern=^cus_" doc:"The customer who pays."`
	Currency   string   `json:"currency" schema:"enum=usd,eur,gbp;default=usd"`
	Items      []vtItem `json:"items" schema:"minItems=1;maxItems=20"`
	Email      string   `json:"email,omitempty" schema:"format=email"`
	Note       *string  `json:"note,omitempty" schema:"maxLength=10"`
	Tags       []string `json:"tags,omitempty" schema:"uniqueItems;maxItems=3;enum=gift,rush"`
	Weight     int      `json:"weight,omitempty" schema:"exclusiveMinimum=0.5;exclusiveMaximum=9.5"`
	Discount   float64  `json:"discount,omitempty" schema:"exclusiveMinimum=0;maximum=0.5;multipleOf=0.05"`
	Channel    string   `json:"channel,omitempty" schema:"const=api"`
	Odd        int      `json:"a/b~c,omitempty" schema:"maximum=1"`
}

// vtOrderSchema is vtOrder's schema, as the envelope would show it.
const vtOrderSchema = `{"type":"object","properties":{` +
	`"id":{"type":"string","pattern":"^ord_"},` +
	`"limit":{"type":"integer","minimum":1,"maximum":50},` +
	`"customer_id":{"type":"string","description":"The customer who pays.","pattern":"^cus_"},` +
	`"currency":{"type":"string","default":"usd","enum":["usd","eur","gbp"]},` +
	`"items":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string","pattern":"^sku_[a-z0-9]+$"},"quantity":{"type":"integer","minimum":1,"maximum":100}},"required":["sku","quantity"],"additionalProperties":false},"minItems":1,"maxItems":20},` +
	`"email":{"type":"string","format":"email"},` +
	`"note":{"type":["null","string"],"maxLength":10},` +
	`"tags":{"type":["null","array"],"items":{"type":"string","enum":["gift","rush"]},"maxItems":3,"uniqueItems":true},` +
	`"weight":{"type":"integer","exclusiveMinimum":0.5,"exclusiveMaximum":9.5},` +
	`"discount":{"type":"number","multipleOf":0.05,"maximum":0.5,"exclusiveMinimum":0},` +
	`"channel":{"type":"string","const":"api"},` +
	`"a/b~c":{"type":"integer","maximum":1}},` +
	`"required":["id","customer_id","currency","items"],"additionalProperties":false}`

// TestInputSchemaOrder checks the whole schema of the order, byte for byte, and its parameters.
func TestInputSchemaOrder(t *testing.T) {
	t.Parallel()
	s, params, err := inputSchema(reflect.TypeFor[*vtOrder]())
	require.NoError(t, err)
	got, err := json.Marshal(s)
	require.NoError(t, err)
	assert.JSONEq(t, vtOrderSchema, string(got))
	assert.Equal(t, vtOrderSchema, string(got), "property order follows the fields")
	assert.Equal(t, []param{
		{Name: "id", In: "path", Index: []int{0}, Type: reflect.TypeFor[string]()},
		{Name: "limit", In: "query", Index: []int{1}, Type: reflect.TypeFor[int]()},
	}, params)

	// Deterministic: the same type gives the same bytes.
	s2, _, err := inputSchema(reflect.TypeFor[vtOrder]())
	require.NoError(t, err)
	got2, _ := json.Marshal(s2)
	assert.Equal(t, string(got), string(got2))
}

// vtEmbedded holds a path parameter that vtParams promotes.
type vtEmbedded struct {
	Tenant string `path:"tenant"`
	Trace  string `json:"trace,omitempty"`
}

// vtParams exercises URL parameters of every kind beside a body.
type vtParams struct {
	vtEmbedded
	ID     int64     `path:"id"`
	Limit  int       `query:"limit"`
	Cursor *string   `query:"cursor"`
	States []string  `query:"state" schema:"enum=open,closed;maxItems=2"`
	Since  int       `query:"since,omitempty"`
	Ratio  *float32  `query:"ratio" schema:"maximum=1"`
	OK     bool      `query:"ok" json:"ok_json"`
	Body   string    `json:"body"`
	When   time.Time `json:"when,omitzero"`
}

// TestInputSchemaParams checks which parameters are required, their schemas, and their indexes.
func TestInputSchemaParams(t *testing.T) {
	t.Parallel()
	s, params, err := inputSchema(reflect.TypeFor[vtParams]())
	require.NoError(t, err)
	got, _ := json.Marshal(s)
	assert.Equal(t, `{"type":"object","properties":{`+
		`"tenant":{"type":"string"},"trace":{"type":"string"},"id":{"type":"integer"},"limit":{"type":"integer"},`+
		`"cursor":{"type":"string"},"state":{"type":"array","items":{"type":"string","enum":["open","closed"]},"maxItems":2},`+
		`"since":{"type":"integer"},"ratio":{"type":"number","maximum":1},"ok":{"type":"boolean"},`+
		`"body":{"type":"string"},"when":{"type":"string","format":"date-time"}},`+
		`"required":["tenant","id","limit","ok","body"],"additionalProperties":false}`, string(got))

	var names []string
	for _, p := range params {
		names = append(names, p.In+":"+p.Name)
	}
	assert.Equal(t, []string{"path:tenant", "path:id", "query:limit", "query:cursor", "query:state", "query:since", "query:ratio", "query:ok"}, names)

	// Index reaches the field through the embedded struct.
	var in vtParams
	rv := reflect.ValueOf(&in).Elem()
	rv.FieldByIndex(params[0].Index).SetString("acme")
	rv.FieldByIndex(params[1].Index).SetInt(7)
	assert.Equal(t, "acme", in.Tenant)
	assert.Equal(t, int64(7), in.ID)
	assert.Equal(t, reflect.TypeFor[[]string](), params[4].Type)
}

// vtText is a text unmarshaler: a JSON string.
type vtText struct{ v string }

// UnmarshalText implements encoding.TextUnmarshaler.
func (x *vtText) UnmarshalText(b []byte) error { x.v = string(b); return nil }

// vtOpaque decodes itself from any JSON value.
type vtOpaque struct{ v any }

// UnmarshalJSON implements json.Unmarshaler.
func (x *vtOpaque) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &x.v) }

// TestInputSchemaTags checks what each tag key does to a field's schema.
func TestInputSchemaTags(t *testing.T) {
	t.Parallel()
	// Each case is a one-field struct; want is the field's schema.
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"int enum is numbers", reflect.TypeFor[struct {
			X int `json:"x" schema:"enum=1,2,3"`
		}](), `{"type":"integer","enum":[1,2,3]}`},
		{"float const and default", reflect.TypeFor[struct {
			X float64 `json:"x" schema:"const=1.5;default=1.5"`
		}](), `{"type":"number","default":1.5,"const":1.5}`},
		{"bool enum", reflect.TypeFor[struct {
			X bool `json:"x" schema:"enum=true"`
		}](), `{"type":"boolean","enum":[true]}`},
		{"string enum with escapes and spaces", reflect.TypeFor[struct {
			X string `json:"x" schema:"enum=a\\,b, c ;minLength=1"`
		}](), `{"type":"string","enum":["a,b","c"],"minLength":1}`},
		{"escaped semicolon in a pattern, backslashes kept", reflect.TypeFor[struct {
			X string `json:"x" schema:"pattern=^\\d+\\;$ ; maxLength=9"`
		}](), `{"type":"string","maxLength":9,"pattern":"^\\d+;$"}`},
		{"slice: array keys on the array, value keys on the items", reflect.TypeFor[struct {
			X []int `json:"x" schema:"minItems=2;maxItems=4;uniqueItems=true;minimum=0;maximum=9;default=[1,2]"`
		}](), `{"type":"array","items":{"type":"integer","minimum":0,"maximum":9},"default":[1,2],"minItems":2,"maxItems":4,"uniqueItems":true}`},
		{"minItems 0 keeps null", reflect.TypeFor[struct {
			X []string `json:"x" schema:"minItems=0"`
		}](), `{"type":["null","array"],"items":{"type":"string"},"minItems":0}`},
		{"pointer", reflect.TypeFor[struct {
			X *int8 `json:"x" schema:"minimum=-3;example=2"`
		}](), `{"type":["null","integer"],"examples":[2],"minimum":-3,"maximum":127}`},
		{"doc and jsonschema tags", reflect.TypeFor[struct {
			X string `json:"x" doc:"the x"`
		}](), `{"type":"string","description":"the x"}`},
		{"nested struct, pointer, slice of structs", reflect.TypeFor[struct {
			X *struct {
				Y []struct {
					Z string `json:"z" schema:"format=uuid" jsonschema:"a zed"`
				} `json:"y"`
			} `json:"x" schema:"default={\"y\":[]}"`
		}](), `{"type":["null","object"],"properties":{"y":{"type":["null","array"],"items":{"type":"object","properties":{"z":{"type":"string","description":"a zed","format":"uuid"}},"required":["z"],"additionalProperties":false}}},"default":{"y":[]},"required":["y"],"additionalProperties":false}`},
		{"map of structs", reflect.TypeFor[struct {
			X map[string]struct {
				N uint8 `json:"n" schema:"maximum=9"`
			} `json:"x"`
		}](), `{"type":"object","additionalProperties":{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":9}},"required":["n"],"additionalProperties":false}}`},
		{"time.Time", reflect.TypeFor[struct {
			X *time.Time `json:"x"`
		}](), `{"type":["null","string"],"format":"date-time"}`},
		{"byte slice is base64", reflect.TypeFor[struct {
			X []byte `json:"x"`
		}](), `{"type":["null","string"],"contentEncoding":"base64"}`},
		{"raw message is any value", reflect.TypeFor[struct {
			X *json.RawMessage `json:"x"`
		}](), `true`},
		{"text unmarshaler is a string", reflect.TypeFor[struct {
			X vtText `json:"x" schema:"enum=a,b"`
		}](), `{"type":"string","enum":["a","b"]}`},
		{"json unmarshaler is any value", reflect.TypeFor[struct {
			X *vtOpaque `json:"x" schema:"default=[1]"`
		}](), `{"default":[1]}`},
		{"netip.Addr is a string", reflect.TypeFor[struct {
			X netip.Addr `json:"x" schema:"format=ipv4"`
		}](), `{"type":"string","format":"ipv4"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _, err := inputSchema(tt.typ)
			require.NoError(t, err)
			fs := s.Properties["x"]
			require.NotNil(t, fs, "property x")
			got, err := json.Marshal(fs)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			_, err = newValidator(s)
			assert.NoError(t, err)
		})
	}
}

// TestInputSchemaErrors checks that every mistake is a registration error naming the input type,
// the field and the key.
func TestInputSchemaErrors(t *testing.T) {
	t.Parallel()
	type inner struct {
		Tag string `json:"tag" schema:"enum=a,b;pattern=^c$"`
	}
	tests := []struct {
		name       string
		typ        reflect.Type
		field, key string // what the error must name
		msg        string // a part of the message
	}{
		{"unknown key", reflect.TypeFor[struct {
			X string `schema:"maxlength=3"`
		}](), "X", "schema tag maxlength", "unknown key"},
		{"minimum not a number", reflect.TypeFor[struct {
			X int `schema:"minimum=abc"`
		}](), "X", "schema tag minimum", `"abc" is not a number`},
		// Issue 40: another separator than the semicolon says the grammar.
		{"items joined by a comma", reflect.TypeFor[struct {
			X int `schema:"minimum=1,maximum=100"`
		}](), "X", "schema tag minimum", `separated by semicolons, as in schema:"minimum=1;maximum=100"`},
		{"items joined by a space", reflect.TypeFor[struct {
			X int `schema:"minimum=1 maximum=100"`
		}](), "X", "schema tag minimum", "separated by semicolons"},
		{"a key written with a colon", reflect.TypeFor[struct {
			X int `schema:"minimum:1"`
		}](), "X", "schema tag minimum:1", "separated by semicolons"},
		{"pattern does not compile", reflect.TypeFor[struct {
			X string `schema:"pattern=a("`
		}](), "X", "schema tag pattern", "does not compile"},
		{"enum on a struct", reflect.TypeFor[struct {
			X struct{ A int } `schema:"enum=a"`
		}](), "X", "schema tag enum", "not to a struct"},
		{"enum on a slice of structs", reflect.TypeFor[struct {
			X []struct{ A int } `schema:"enum=a"`
		}](), "X", "schema tag enum", "JSON object"},
		{"enum value not an int", reflect.TypeFor[struct {
			X int `schema:"enum=1,two"`
		}](), "X", "schema tag enum", `"two" is not a int`},
		{"enum value out of range", reflect.TypeFor[struct {
			X uint8 `schema:"enum=1,300"`
		}](), "X", "schema tag enum", `"300" is not a uint8`},
		{"enum value twice", reflect.TypeFor[struct {
			X string `schema:"enum=a,a"`
		}](), "X", "schema tag enum", "appears twice"},
		{"enum member breaks the pattern (nested)", reflect.TypeFor[struct {
			Y []inner
		}](), "Y[].Tag", "schema tag enum", `"a" does not satisfy`},
		{"minLength on a number", reflect.TypeFor[struct {
			X int `schema:"minLength=1"`
		}](), "X", "schema tag minLength", "applies to strings"},
		{"minimum on a string", reflect.TypeFor[struct {
			X string `schema:"minimum=1"`
		}](), "X", "schema tag minimum", "applies to numbers"},
		{"minItems on a string", reflect.TypeFor[struct {
			X string `schema:"minItems=1"`
		}](), "X", "schema tag minItems", "applies to slices"},
		{"negative maxLength", reflect.TypeFor[struct {
			X string `schema:"maxLength=-1"`
		}](), "X", "schema tag maxLength", "non-negative"},
		{"multipleOf zero", reflect.TypeFor[struct {
			X float64 `schema:"multipleOf=0"`
		}](), "X", "schema tag multipleOf", "not greater than 0"},
		{"unknown format", reflect.TypeFor[struct {
			X string `schema:"format=e-mail"`
		}](), "X", "schema tag format", `unknown format "e-mail"`},
		{"key twice", reflect.TypeFor[struct {
			X int `schema:"minimum=1;minimum=2"`
		}](), "X", "schema tag minimum", "twice"},
		{"key without value", reflect.TypeFor[struct {
			X int `schema:"minimum"`
		}](), "X", "schema tag minimum", "needs a value"},
		{"empty bounds", reflect.TypeFor[struct {
			X int `schema:"minimum=5;maximum=4"`
		}](), "X", "schema tag", "no number satisfies minimum=5 and maximum=4"},
		{"exclusive bounds meet", reflect.TypeFor[struct {
			X float64 `schema:"exclusiveMinimum=1;maximum=1"`
		}](), "X", "schema tag", "no number satisfies"},
		{"minLength above maxLength", reflect.TypeFor[struct {
			X string `schema:"minLength=5;maxLength=4"`
		}](), "X", "schema tag", "minLength=5 exceeds maxLength=4"},
		{"minimum below the type", reflect.TypeFor[struct {
			X uint16 `schema:"minimum=-1"`
		}](), "X", "schema tag minimum", "below the smallest uint16"},
		{"default breaks maximum", reflect.TypeFor[struct {
			X int `schema:"maximum=5;default=6"`
		}](), "X", "schema tag default", "does not satisfy"},
		{"default not in enum", reflect.TypeFor[struct {
			X string `schema:"enum=a,b;default=c"`
		}](), "X", "schema tag default", "does not satisfy"},
		{"default not JSON for a slice", reflect.TypeFor[struct {
			X []int `schema:"default=1,2"`
		}](), "X", "schema tag default", "not a JSON value"},
		{"bool value", reflect.TypeFor[struct {
			X bool `schema:"const=yes"`
		}](), "X", "schema tag const", "neither true nor false"},
		{"uniqueItems value", reflect.TypeFor[struct {
			X []int `schema:"uniqueItems=yes"`
		}](), "X", "schema tag uniqueItems", "neither true nor false"},
		{"doc and jsonschema", reflect.TypeFor[struct {
			X int `doc:"a" jsonschema:"b"`
		}](), "X", "doc tag", "not both"},
		{"jsonschema WORD=", reflect.TypeFor[struct {
			X int `jsonschema:"minimum=1"`
		}](), "X", "jsonschema tag", "WORD="},
		{"path param with omitempty", reflect.TypeFor[struct {
			X string `path:"x,omitempty"`
		}](), "X", "path tag", "always required"},
		{"path and query", reflect.TypeFor[struct {
			X string `path:"x" query:"x"`
		}](), "X", "path tag", "both"},
		{"empty param name", reflect.TypeFor[struct {
			X string `query:""`
		}](), "X", "query tag", "empty"},
		{"param of struct type", reflect.TypeFor[struct {
			X time.Time `query:"x"`
		}](), "X", "query tag", "cannot be a time.Time"},
		{"path param slice", reflect.TypeFor[struct {
			X []string `path:"x"`
		}](), "X", "path tag", "cannot be a []string"},
		{"param not on the input", reflect.TypeFor[struct {
			X struct {
				Y string `query:"y"`
			}
		}](), "X.Y", "query tag", "only a field of the input struct"},
		{"param name twice", reflect.TypeFor[struct {
			X string `path:"id"`
			Y string `query:"id"`
		}](), "Y", "", `"id" is also the name of field X`},
		{"param name is a body name", reflect.TypeFor[struct {
			X string `json:"id"`
			Y string `query:"id"`
		}](), "X", "", `"id" is also the name of field Y`},
		// Built at run time: go vet rightly refuses such tags in source.
		{"param json name is a body name", vtStruct(`json:"x"`, `query:"y" json:"x"`),
			"Y", "json tag", `tag the parameter json:"-"`},
		{"json names collide", vtStruct(`json:"a"`, `json:"a"`),
			"Y", "", `"a" is also the name of field X`},
		{"string option", reflect.TypeFor[struct {
			X int `json:"x,string"`
		}](), "X", "json tag", ",string"},
		{"embedded with a json name", reflect.TypeFor[struct {
			vtEmbedded `json:"e"`
		}](), "vtEmbedded", "json tag", "embedded field"},
		{"tag on an embedded field", reflect.TypeFor[struct {
			vtEmbedded `schema:"minItems=1"`
		}](), "vtEmbedded", "schema tag", "embedded field takes no schema tag"},
		{"param on an unexported field", reflect.TypeFor[struct {
			id string `path:"id"`
		}](), "id", "path tag", "unexported"},
		{"chan", reflect.TypeFor[struct {
			X []chan int
		}](), "X[]", "", "cannot be represented in JSON"},
		{"int map keys", reflect.TypeFor[struct {
			X map[int]string
		}](), "X", "", "map key type int"},
		{"recursive type", reflect.TypeFor[vtTree](), "Kids[]", "", "recursive type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, params, err := inputSchema(tt.typ)
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Nil(t, params)
			var te *inputTypeError
			require.True(t, errors.As(err, &te), "want *inputTypeError, got %T: %v", err, err)
			assert.Equal(t, tt.typ, te.Input)
			assert.Equal(t, tt.field, te.Field)
			assert.Equal(t, tt.key, te.Key)
			assert.Contains(t, err.Error(), tt.msg)
			assert.Contains(t, err.Error(), tt.typ.String(), "the error names the type")
		})
	}
}

// vtStruct is struct{ X string; Y string } with the given tags.
func vtStruct(tagX, tagY string) reflect.Type {
	return reflect.StructOf([]reflect.StructField{
		{Name: "X", Type: reflect.TypeFor[string](), Tag: reflect.StructTag(tagX)},
		{Name: "Y", Type: reflect.TypeFor[string](), Tag: reflect.StructTag(tagY)},
	})
}

// vtTree is recursive, which ForType cannot describe.
type vtTree struct {
	Kids []vtTree `json:"kids"`
}

// TestInputSchemaNotAStruct checks the input types that are refused as a whole.
func TestInputSchemaNotAStruct(t *testing.T) {
	t.Parallel()
	for _, typ := range []reflect.Type{nil, reflect.TypeFor[int](), reflect.TypeFor[[]vtOrder](), reflect.TypeFor[**vtOrder]()} {
		_, _, err := inputSchema(typ)
		assert.Error(t, err, "%v", typ)
	}
	_, _, err := inputSchema(reflect.TypeFor[vtOpaque]())
	assert.ErrorContains(t, err, "json.Unmarshaler")
}

// TestSchemaTagSplit checks the tag splitter's escapes.
func TestSchemaTagSplit(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{"a", "b;c", `d\e`, ""}, schemaTagSplit(`a;b\;c;d\e;`, ';'))
	assert.Equal(t, []string{`x\`}, schemaTagSplit(`x\`, ';'))
}

// TestInputSchemaNeverPanics feeds inputSchema every field type and tag combination the
// table tests use, crossed.
func TestInputSchemaNeverPanics(t *testing.T) {
	t.Parallel()
	types := []reflect.Type{
		reflect.TypeFor[string](), reflect.TypeFor[*int](), reflect.TypeFor[[]float32](), reflect.TypeFor[bool](),
		reflect.TypeFor[[]vtItem](), reflect.TypeFor[map[string]int](), reflect.TypeFor[any](), reflect.TypeFor[[2]int](),
		reflect.TypeFor[[]byte](), reflect.TypeFor[json.RawMessage](), reflect.TypeFor[time.Time](), reflect.TypeFor[uint64](),
	}
	tags := []string{
		`schema:"enum=1,2"`, `schema:"enum=a"`, `schema:"const=true"`, `schema:"minimum=1;maximum=2"`,
		`schema:"minItems=1;uniqueItems"`, `schema:"default=1"`, `schema:"default=[1]"`, `schema:"example=x"`,
		`schema:"pattern=^a"`, `schema:"format=date"`, `schema:"multipleOf=2"`, `schema:";;"`, `schema:"="`,
		`query:"q"`, `path:"p"`, `query:"q,omitempty" schema:"maximum=3"`, `json:"-" query:"q"`,
	}
	for _, typ := range types {
		for _, tag := range tags {
			st := reflect.StructOf([]reflect.StructField{{Name: "X", Type: typ, Tag: reflect.StructTag(tag)}})
			s, _, err := inputSchema(st)
			if err != nil {
				assert.True(t, strings.Contains(err.Error(), "field X"), "%s %s: %v", typ, tag, err)
				continue
			}
			_, err = newValidator(s)
			assert.NoError(t, err, "%s %s", typ, tag)
		}
	}
}
