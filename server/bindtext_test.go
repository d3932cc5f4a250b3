package server

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type tbCurrency string

type tbRow struct {
	SKU   string   `json:"sku"`
	Qty   int8     `json:"qty"`
	Price *float32 `json:"price,omitempty"`
	Tags  []string `json:"tags"`
}

type tbInput struct {
	ID       string        `path:"id" json:"-"`
	Name     string        `json:"name"`
	Currency tbCurrency    `json:"currency"`
	Count    uint16        `json:"count"`
	Big      int64         `json:"big"`
	Ratio    float64       `json:"ratio"`
	On       *bool         `json:"on"`
	Rows     []tbRow       `json:"rows"`
	Ptrs     []*tbRow      `json:"ptrs"`
	Grid     [][]int       `json:"grid"`
	Child    *tbRow        `json:"child"`
	Plain    tbRow         `json:"plain"`
	Untagged string        //
	Dash     int           `json:"-,"`
	Odd      string        `json:"a b"`
	Bad      string        `json:"a\"b"` // not a valid name: the field's own
	private  string        //nolint:unused // ignored by encoding/json
	U        uintptr       `json:"u"`
	Dur      time.Duration `json:"dur"`
}

// TestTextBinderPlans binds the plain parts, and leaves to encoding/json the types with a
// decoding of their own or rules not repeated.
func TestTextBinderPlans(t *testing.T) {
	t.Parallel()
	require.NotNil(t, newTextBinder(reflect.TypeFor[tbInput]()))
	require.NotNil(t, newTextBinder(reflect.TypeFor[*tbInput]()))
	type embedded struct{ tbRow }
	for _, typ := range []reflect.Type{
		reflect.TypeFor[struct{ T time.Time }](),
		reflect.TypeFor[struct{ N json.Number }](),
		reflect.TypeFor[struct{ B []byte }](),
		reflect.TypeFor[struct{ M map[string]int }](),
		reflect.TypeFor[struct{ A any }](),
		reflect.TypeFor[struct{ A [2]int }](),
		reflect.TypeFor[struct {
			S int `json:",string"`
		}](),
		reflect.StructOf([]reflect.StructField{ // two fields of one name (vet would refuse the literal)
			{Name: "A", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
			{Name: "B", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
		}),
		reflect.TypeFor[struct{ P **int }](),
		reflect.TypeFor[embedded](),
		reflect.TypeFor[struct{ R json.RawMessage }](),
	} {
		assert.Nil(t, newTextBinder(typ), "%s", typ)
	}
}

// tbBind binds body both ways; ok reports that the binder did, and then the two agree.
func tbBind[T any](t *testing.T, body string) (ok bool) {
	t.Helper()
	if _, err := decodeBody([]byte(body)); err != nil {
		return false // the pipeline binds only what it decoded: one JSON value, no key twice
	}
	b := newTextBinder(reflect.TypeFor[T]())
	require.NotNil(t, b)
	var want, got T
	jsonErr := json.Unmarshal([]byte(body), &want)
	if !b.bind(body, reflect.ValueOf(&got).Elem()) {
		return false
	}
	if jsonErr != nil {
		t.Fatalf("bound what encoding/json refuses (%v): %s", jsonErr, body)
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("binding differs for %s\nencoding/json: %+v\nbinder:        %+v", body, want, got)
	}
	return true
}

func TestTextBinderCases(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body  string
		bound bool
	}{
		{`{}`, true},
		{`null`, true},
		{` {"name":"a\u00e9\n\ud800x","currency":"usd","count":65535,"big":-9223372036854775808,"ratio":-1.5e-3} `, true},
		{`{"on":true,"rows":[{"sku":"a","qty":-128,"price":1e38,"tags":[]},{"sku":"","qty":127,"tags":null}]}`, true},
		{`{"ptrs":[null,{"sku":"x","qty":0,"price":null}],"grid":[[],[1,2],[3]],"child":null,"plain":{"qty":1}}`, true},
		{`{"Untagged":"u","-":7,"a b":"odd","Bad":"b","u":18446744073709551615,"dur":1000,"on":false,"on":null}`, false}, // named twice
		{`{"Untagged":"u","-":7,"a b":"odd","Bad":"b","u":18446744073709551615,"dur":1000,"on":null}`, true},
		{`{"rows":[],"ptrs":[],"grid":[[[]]]}`, false}, // an int is no array
		{`{"count":65536}`, false},                      // overflow: encoding/json says so
		{`{"count":-1}`, false},                         //
		{`{"big":1.0}`, false},                          // encoding/json refuses it; the pipeline rewrites it first
		{`{"big":1e2}`, false},                          //
		{`{"ratio":1e400}`, false},                      //
		{`{"rows":[{"price":1e39}]}`, false},            // beyond a float32
		{`{"NAME":"a"}`, false},                         // matched by case: left to encoding/json
		{`{"nam\u0065":"a"}`, false},                    // an escaped key
		{`{"private":"a"}`, false},                      // no such field
		{`{"ID":"a"}`, false},                           //
		{`{"name":1}`, false},                           // a type error: encoding/json says so
		{`{"on":"true"}`, false},                        //
		{`{"rows":{}}`, false},                          //
		{`{"plain":[]}`, false},                         //
		{`{"name":"a"} x`, false},                       // not JSON
		{`{"grid":[[1,2],[3,"x"]]}`, false},             //
		{`{"rows":[{"tags":["a","b,c]","[{"]}]}`, true}, // brackets and commas in strings
		{`{"grid":[ [ 1 , 2 ] , [ ] , [3] ]}`, true},    // white space
		{`{"ptrs":[{"tags":["x"]},{},null]}`, true},
	} {
		t.Run(c.body, func(t *testing.T) {
			assert.Equal(t, c.bound, tbBind[tbInput](t, c.body))
		})
	}
}

// TestTextBinderAgrees binds random bodies both ways: whenever the binder binds one, its value
// is encoding/json's.
func TestTextBinderAgrees(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(5, 6))
	pool := []string{"name", "currency", "count", "big", "ratio", "on", "rows", "ptrs", "grid", "child", "plain",
		"sku", "qty", "price", "tags", "Untagged", "-", "a b", "Bad", "u", "dur", "Name", "x"}
	var base any
	require.NoError(t, json.Unmarshal([]byte(`{"name":"n","currency":"usd","count":3,"big":-4,"ratio":0.5,"on":true,`+
		`"rows":[{"sku":"a","qty":1,"price":2.5,"tags":["t"]}],"ptrs":[{"sku":"b","qty":2}],"grid":[[1],[2,3]],`+
		`"child":{"sku":"c","qty":3},"plain":{"sku":"d","qty":4,"tags":[]},"u":5,"dur":6}`), &base))
	bound := 0
	for range 20000 {
		b, err := json.Marshal(xpMutate(rnd, xpCopy(base), pool, 1+rnd.IntN(3)))
		require.NoError(t, err)
		if tbBind[tbInput](t, string(b)) {
			bound++
		}
	}
	t.Logf("bound %d of 20000", bound)
	assert.Greater(t, bound, 5000)
}

// FuzzTextBinder holds the binder to encoding/json on any body.
func FuzzTextBinder(f *testing.F) {
	f.Add(`{"name":"a","rows":[{"sku":"a","qty":1,"tags":["x"]}],"grid":[[1,2]],"child":{"price":1.5}}`)
	f.Add(`{"ptrs":[null,{"sku":"x\u0041"}],"count":7,"on":false}`)
	f.Add(strings.Repeat(`{"plain":`, 3))
	f.Fuzz(func(t *testing.T, body string) {
		tbBind[tbInput](t, body)
	})
}
