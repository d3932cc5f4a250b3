package remedy_test

import (
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/stretchr/testify/assert"
)

func TestToPointer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"$", ""},
		{"#", ""},
		{"(root)", ""},
		{"/a/b", "/a/b"},
		{"/items/0/sku", "/items/0/sku"},
		{"#/a/b", "/a/b"},
		{"#/profile/color", "/profile/color"},
		{"#/a%20b", "/a b"},
		{"$.a.b", "/a/b"},
		{"$['a'][0]", "/a/0"},
		{`$["a.b"].c`, "/a.b/c"},
		{"(root).a", "/a"},
		{"(root).a.b[2]", "/a/b/2"},
		{"items[0].sku", "/items/0/sku"},
		{"card[number]", "/card/number"},
		{"items[0][price]", "/items/0/price"},
		{"body.items[3].tags", "/items/3/tags"},
		{"body", "/body"},
		{"email", "/email"},
		{"a~b", "/a~0b"},
		{"spec.template.spec.containers[0].image", "/spec/template/spec/containers/0/image"},
		{"requests[0].audio_config.sample_rate_hertz", "/requests/0/audio_config/sample_rate_hertz"},
		{"a[unclosed", "/a/unclosed"},
	} {
		assert.Equal(t, c.want, remedy.ToPointer(c.in), "ToPointer(%q)", c.in)
	}
}

// TestPathArrays: segment arrays become pointers with ~0/~1 escaping; a FastAPI location prefix
// "body" is dropped.
func TestPathArrays(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ path, want string }{
		{`["items",0,"sku"]`, "/items/0/sku"},
		{`["body","items",3,"tags"]`, "/items/3/tags"},
		{`["body"]`, "/body"},
		{`["a/b","c~d"]`, "/a~1b/c~0d"},
		{`[]`, ""},
	} {
		body := []byte(`{"error":{"statusCode":422,"code":"invalid_body","issues":[{"path":` + c.path + `}]}}`)
		e, ok := remedy.Parse(422, nil, body)
		if assert.True(t, ok) && assert.Len(t, e.Issues, 1) {
			assert.Equal(t, c.want, e.Issues[0].Path, "path %s", c.path)
		}
	}
}
