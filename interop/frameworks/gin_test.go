package frameworks

import (
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/gin-gonic/gin/binding"
	"github.com/go-playground/validator/v10"

	"github.com/remedy-go/remedy"
)

// ginApp is gin as its README shows it: gin.Default(), c.ShouldBindJSON(&v) (or
// ShouldBindQuery) with binding tags, and c.JSON(400, gin.H{"error": err.Error()}).
func ginApp() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	gin.DefaultWriter = io.Discard
	r := gin.Default()
	r.POST("/items", func(c *gin.Context) {
		var v CreateItem
		if err := c.ShouldBindJSON(&v); err != nil {
			c.JSON(http.StatusBadRequest, gin.H{"error": err.Error()})
			return
		}
		c.JSON(http.StatusCreated, v)
	})
	r.GET("/items", func(c *gin.Context) {
		var q ListQuery
		if err := c.ShouldBindQuery(&q); err != nil {
			c.JSON(http.StatusBadRequest, gin.H{"error": err.Error()})
			return
		}
		c.JSON(http.StatusOK, gin.H{"items": []string{}})
	})
	return r
}

// TestGin records gin v1.12.0's default failures. go-playground/validator's text names the
// rule (the tag) but not its parameter, and the field by its Go namespace
// (CreateItem.Lines[1].SKU), which is not the JSON member's name: no path is read from it.
func TestGin(t *testing.T) {
	base := serve(t, ginApp())
	const d = remedy.DialectGenericJSON
	run(t, base, []recording{
		{name: "gin-enum", dialect: d, req: post("/items", enumBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "oneof"}}}},
		{name: "gin-maximum", dialect: d, req: post("/items", maximumBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "max"}}}},
		{name: "gin-required", dialect: d, req: post("/items", requiredBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "required"}}}},
		{name: "gin-type", dialect: d, req: post("/items", typeBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/quantity", code: "type", expected: `"integer"`}}}},
		{name: "gin-nested-required", dialect: d, req: post("/items", nestedBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "required"}}}},
		{name: "gin-nested-type", dialect: d, req: post("/items", nestedTypeBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "type"}}}},
		{name: "gin-several", dialect: d, req: post("/items", `{"currency":"gbp","quantity":500}`),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "required"}, {code: "oneof"}, {code: "max"}}}},
		{name: "gin-query-maximum", dialect: d, req: get("/items?limit=500"),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "max"}}}},
		// strconv's text names neither the parameter nor the rule.
		{name: "gin-query-type", dialect: d, req: get("/items?limit=ten"),
			want: want{status: 400, code: "bad_request"}},
		{name: "gin-truncated-json", dialect: d, req: post("/items", truncatedBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "invalid_json"}}}},
		{name: "gin-not-found", dialect: remedy.DialectUnstructured, req: get("/nope"),
			want: want{status: 404, code: "not_found"}},
	})
}

// TestGinTagNames records gin with the tag name function go-playground/validator's
// documentation shows (the json tag's name): the namespace then names JSON members, and the
// path is read.
// (The validator caches what it read of a struct, and gin's is shared by the whole process:
// the test gives gin, for its duration, a validator of its own set up as gin sets up its
// default one, plus the tag name function.)
func TestGinTagNames(t *testing.T) {
	v := validator.New()
	v.SetTagName("binding")
	v.RegisterTagNameFunc(func(fld reflect.StructField) string {
		name := strings.SplitN(fld.Tag.Get("json"), ",", 2)[0]
		if name == "-" {
			return ""
		}
		return name
	})
	saved := binding.Validator
	binding.Validator = ginValidator{v}
	t.Cleanup(func() { binding.Validator = saved })
	base := serve(t, ginApp())
	const d = remedy.DialectGenericJSON
	run(t, base, []recording{
		{name: "gin-tagname-nested-required", dialect: d, req: post("/items", nestedBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/lines/1/sku", code: "required"}}}},
		{name: "gin-tagname-enum", dialect: d, req: post("/items", enumBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/currency", code: "oneof"}}}},
	})
}

// ginValidator is a go-playground/validator as gin's binding.StructValidator.
type ginValidator struct{ v *validator.Validate }

func (g ginValidator) ValidateStruct(obj any) error { return g.v.Struct(obj) }
func (g ginValidator) Engine() any                  { return g.v }
