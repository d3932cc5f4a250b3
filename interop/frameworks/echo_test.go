package frameworks

import (
	"net/http"
	"testing"

	"github.com/go-playground/validator/v10"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/remedy-go/remedy"
)

// echoValidator is the CustomValidator of echo's documentation (Request, "Validate Data").
type echoValidator struct{ validator *validator.Validate }

func (cv *echoValidator) Validate(i any) error {
	if err := cv.validator.Struct(i); err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	return nil
}

// echoApp is echo as its documentation shows it: the CustomValidator above, a handler that
// binds then validates, returning echo.NewHTTPError(400, err.Error()) when binding fails
// (/items), one that returns the binder's error as it is (/raw/items), and the rate limiter
// middleware with its default store on /limited.
func echoApp() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Validator = &echoValidator{validator: validator.New()}
	create := func(wrap bool) echo.HandlerFunc {
		return func(c echo.Context) error {
			v := new(CreateItem)
			if err := c.Bind(v); err != nil {
				if wrap {
					return echo.NewHTTPError(http.StatusBadRequest, err.Error())
				}
				return err
			}
			if err := c.Validate(v); err != nil {
				return err
			}
			return c.JSON(http.StatusCreated, v)
		}
	}
	e.POST("/items", create(true))
	e.POST("/raw/items", create(false))
	e.GET("/items", func(c echo.Context) error {
		q := new(ListQuery)
		if err := c.Bind(q); err != nil {
			return err
		}
		if err := c.Validate(q); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"items": []string{}})
	})
	limited := e.Group("/limited", middleware.RateLimiter(middleware.NewRateLimiterMemoryStore(1)))
	limited.GET("", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	return e
}

// TestEcho records echo v4's default failures: go-playground/validator's text through the
// documented CustomValidator, the DefaultBinder's texts, the unknown route and the rate
// limiter's refusal.
func TestEcho(t *testing.T) {
	base := serve(t, echoApp())
	const d = remedy.DialectGenericJSON
	run(t, base, []recording{
		{name: "echo-enum", dialect: d, req: post("/items", enumBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "oneof"}}}},
		{name: "echo-maximum", dialect: d, req: post("/items", maximumBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "max"}}}},
		{name: "echo-required", dialect: d, req: post("/items", requiredBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "required"}}}},
		{name: "echo-nested-required", dialect: d, req: post("/items", nestedBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "required"}}}},
		{name: "echo-type", dialect: d, req: post("/items", typeBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/quantity", code: "type", expected: `"integer"`}}}},
		{name: "echo-binder-type", dialect: d, req: post("/raw/items", typeBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/quantity", code: "type", expected: `"integer"`}}}},
		{name: "echo-binder-nested-type", dialect: d, req: post("/raw/items", nestedTypeBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "type"}}}},
		{name: "echo-binder-syntax", dialect: d, req: post("/raw/items", syntaxBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "invalid_json"}}}},
		{name: "echo-query-maximum", dialect: d, req: get("/items?limit=500"),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "max"}}}},
		{name: "echo-query-type", dialect: d, req: get("/items?limit=ten"),
			want: want{status: 400, code: "bad_request"}},
		{name: "echo-not-found", dialect: d, req: get("/nope"),
			want: want{status: 404, code: "not_found"}},
		{name: "echo-rate-limit", dialect: d, req: get("/limited"), repeat: 5,
			want: want{status: 429, code: "too_many_requests", retryable: true}},
	})
}
