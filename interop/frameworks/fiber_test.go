package frameworks

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/go-playground/validator/v10"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/limiter"

	"github.com/remedy-go/remedy"
)

// serveFiber runs a fiber app on a loopback port for the test's duration.
func serveFiber(t *testing.T, app *fiber.App) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln)
	t.Cleanup(func() { app.Shutdown() })
	return "http://" + ln.Addr().String()
}

// fiberApp is fiber v2 with its default error handler (text/plain: a *fiber.Error's status,
// 500 for any other error): BodyParser's and go-playground/validator's errors returned as
// they are, as a handler does that does not map them, and the limiter middleware with its
// defaults on /limited.
func fiberApp() *fiber.App {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	validate := validator.New()
	app.Use("/limited", limiter.New())
	app.Get("/limited", func(c *fiber.Ctx) error { return c.SendString("ok") })
	app.Post("/items", func(c *fiber.Ctx) error {
		v := new(CreateItem)
		if err := c.BodyParser(v); err != nil {
			return err
		}
		if err := validate.Struct(v); err != nil {
			return err
		}
		return c.Status(fiber.StatusCreated).JSON(v)
	})
	app.Get("/items", func(c *fiber.Ctx) error {
		q := new(ListQuery)
		if err := c.QueryParser(q); err != nil {
			return err
		}
		if err := validate.Struct(q); err != nil {
			return err
		}
		return c.JSON(fiber.Map{"items": []string{}})
	})
	return app
}

// fiberDocsApp is the validation example of fiber v2's documentation (Guide, "Validation"):
// an XValidator that lists each failure's field, tag and value, joined into a *fiber.Error,
// and a global error handler that answers 400 {"success": false, "message": err.Error()}.
func fiberDocsApp() *fiber.App {
	type errorResponse struct {
		Error       bool
		FailedField string
		Tag         string
		Value       any
	}
	validate := validator.New()
	check := func(data any) []errorResponse {
		var out []errorResponse
		var errs validator.ValidationErrors
		if errors.As(validate.Struct(data), &errs) {
			for _, err := range errs {
				out = append(out, errorResponse{Error: true, FailedField: err.Field(), Tag: err.Tag(), Value: err.Value()})
			}
		}
		return out
	}
	app := fiber.New(fiber.Config{
		DisableStartupMessage: true,
		ErrorHandler: func(c *fiber.Ctx, err error) error {
			return c.Status(fiber.StatusBadRequest).JSON(struct {
				Success bool   `json:"success"`
				Message string `json:"message"`
			}{false, err.Error()})
		},
	})
	app.Post("/items", func(c *fiber.Ctx) error {
		v := new(CreateItem)
		if err := c.BodyParser(v); err != nil {
			return err
		}
		if errs := check(v); len(errs) > 0 && errs[0].Error {
			msgs := make([]string, 0, len(errs))
			for _, err := range errs {
				msgs = append(msgs, fmt.Sprintf("[%s]: '%v' | Needs to implement '%s'", err.FailedField, err.Value, err.Tag))
			}
			return &fiber.Error{Code: fiber.ErrBadRequest.Code, Message: strings.Join(msgs, " and ")}
		}
		return c.Status(fiber.StatusCreated).JSON(v)
	})
	return app
}

// TestFiber records fiber v2's default failures: a handler's plain error is a 500 whatever it
// says, so a client's decoding or validation failure comes as a 500 whose text is the
// decoder's or the validator's.
func TestFiber(t *testing.T) {
	base := serveFiber(t, fiberApp())
	const d = remedy.DialectUnstructured
	run(t, base, []recording{
		{name: "fiber-enum", dialect: d, req: post("/items", enumBody),
			want: want{status: 500, code: "internal_server_error", issues: []issue{{code: "oneof"}}}},
		{name: "fiber-maximum", dialect: d, req: post("/items", maximumBody),
			want: want{status: 500, code: "internal_server_error", issues: []issue{{code: "max"}}}},
		{name: "fiber-required", dialect: d, req: post("/items", requiredBody),
			want: want{status: 500, code: "internal_server_error", issues: []issue{{code: "required"}}}},
		{name: "fiber-nested-required", dialect: d, req: post("/items", nestedBody),
			want: want{status: 500, code: "internal_server_error", issues: []issue{{code: "required"}}}},
		{name: "fiber-type", dialect: d, req: post("/items", typeBody),
			want: want{status: 500, code: "internal_server_error", issues: []issue{{path: "/quantity", code: "type", expected: `"integer"`}}}},
		{name: "fiber-nested-type", dialect: d, req: post("/items", nestedTypeBody),
			want: want{status: 500, code: "internal_server_error", issues: []issue{{code: "type"}}}},
		{name: "fiber-syntax", dialect: d, req: post("/items", syntaxBody),
			want: want{status: 500, code: "internal_server_error", issues: []issue{{code: "invalid_json"}}}},
		{name: "fiber-query-maximum", dialect: d, req: get("/items?limit=500"),
			want: want{status: 500, code: "internal_server_error", issues: []issue{{code: "max"}}}},
		// gorilla/schema's text names the parameter, not the type it wants.
		{name: "fiber-query-type", dialect: d, req: get("/items?limit=ten"),
			want: want{status: 500, code: "internal_server_error", issues: []issue{{path: "/limit", code: "type"}}}},
		{name: "fiber-not-found", dialect: d, req: get("/nope"),
			want: want{status: 404, code: "not_found"}},
		{name: "fiber-rate-limit", dialect: d, req: get("/limited"), repeat: 5, clock: map[string]string{"Retry-After": "60"},
			want: want{status: 429, code: "too_many_requests", retryable: true, retryAfter: 60_000_000_000}},
	})
}

// TestFiberDocs records the validation example of fiber v2's documentation. Its message
// names a failure's Go field without its namespace and prints the value without its type:
// only the tag is read.
func TestFiberDocs(t *testing.T) {
	base := serveFiber(t, fiberDocsApp())
	const d = remedy.DialectGenericJSON
	run(t, base, []recording{
		{name: "fiber-docs-enum", dialect: d, req: post("/items", enumBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "oneof"}}}},
		{name: "fiber-docs-several", dialect: d, req: post("/items", `{"currency":"gbp","quantity":500}`),
			want: want{status: 400, code: "bad_request", issues: []issue{{code: "required"}, {code: "oneof"}, {code: "max"}}}},
		{name: "fiber-docs-type", dialect: d, req: post("/items", typeBody),
			want: want{status: 400, code: "bad_request", issues: []issue{{path: "/quantity", code: "type", expected: `"integer"`}}}},
	})
}
