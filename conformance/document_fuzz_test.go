package conformance

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/remedy-go/remedy/examples/billing"
)

// FuzzPlan checks that any document either is refused with an error or gives operations from
// which arguments, invalid variants and requests are made without a panic or a hang: the
// probe reads documents from servers it does not trust.
func FuzzPlan(f *testing.F) {
	api, _, err := billing.New()
	if err != nil {
		f.Fatal(err)
	}
	doc, err := api.OpenAPI()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(doc)
	seeds, _ := filepath.Glob("testdata/lint/*.json")
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"openapi":"3.0.0","paths":{"/a/{id}":{"post":{"parameters":[{"name":"id","in":"path","schema":{"$ref":"#/components/schemas/A"}}],` +
		`"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/A"}}}}}}},` +
		`"components":{"schemas":{"A":{"$ref":"#/components/schemas/A"}}}}`))
	f.Add([]byte(`{"openapi":"3.1.0","paths":{"/p":{"get":{"parameters":[{"name":"q","in":"query","required":true,"schema":{"type":"string","pattern":"(a|b)*[[:alpha:]]{3,}\\d+"}}]}}}}`))
	f.Add([]byte("openapi: 3.1.0\npaths:\n  /a/{id}: {$ref: '#/components/pathItems/A'}\ncomponents:\n  pathItems:\n    A:\n      post: &op\n" +
		"        parameters: [{name: id, in: path, required: true, schema: {type: integer}}, {name: Idempotency-Key, in: header, required: true}]\n" +
		"        requestBody: {content: {application/json: {schema: {type: object, properties: {n: {type: integer, maximum: 0x10}}}}}}\n      put: *op\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := readDocument(b, "")
		if err != nil {
			return
		}
		p := &prober{ctx: context.Background(), doc: d, tallies: map[string]*tally{}}
		for _, op := range d.ops {
			args := p.args(op)
			for _, v := range p.variants(op) {
				if v.args == nil {
					t.Fatalf("%s: variant %q without arguments", op, v.name)
				}
				p.request(op, v.args)
			}
			p.request(op, args)
			p.variantArgs(op, args)
		}
	})
}
