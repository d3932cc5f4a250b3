// Package plainapi serves, on loopback, a plain JSON API of the kind remedy probe meets in the
// wild: it checks the credentials its OpenAPI document asks for, and validates nothing else,
// so that its handlers execute whatever reaches them. It counts each execution of an operation
// that changes state, by route, so that a test can tell what a probe made it do.
package plainapi

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Token is the bearer token the API accepts.
const Token = "plainapi-test-token"

// Unsafe lists the routes of the operations that change state, as Executed names them.
var Unsafe = []string{"POST /payments", "POST /emails", "PUT /orders/{id}", "DELETE /orders/{id}"}

// API is a running plain API.
type API struct {
	URL string

	mu       sync.Mutex
	executed map[string]int // by route: requests that reached a handler of Unsafe
	refused  []string       // the credentials of each request the credentials check refused
}

// Start serves the API on 127.0.0.1 until the test ends.
func Start(t testing.TB) *API {
	t.Helper()
	a := &API{executed: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, document)
	})
	mux.Handle("GET /payments/{id}", a.auth(func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, map[string]any{"id": r.PathValue("id"), "amount": 100, "currency": "usd"})
	}))
	mux.Handle("GET /orders", a.auth(func(w http.ResponseWriter, _ *http.Request) {
		reply(w, http.StatusOK, []any{})
	}))
	// The handlers of the operations that change state decode what they can, ignore the
	// rest, and execute: a payment of nothing to nobody is still a payment.
	mux.Handle("POST /payments", a.auth(func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		_ = json.NewDecoder(r.Body).Decode(&in)
		a.count("POST /payments")
		reply(w, http.StatusCreated, map[string]any{"id": "pay_1", "amount": in["amount"]})
	}))
	// Sending an email needs no credentials, as the document says.
	mux.HandleFunc("POST /emails", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		_ = json.NewDecoder(r.Body).Decode(&in)
		a.count("POST /emails")
		reply(w, http.StatusAccepted, map[string]any{"queued": true, "to": in["to"]})
	})
	// Updating an order takes credentials when there are some, as the document says: the
	// check is the handler's own business.
	mux.HandleFunc("PUT /orders/{id}", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		_ = json.NewDecoder(r.Body).Decode(&in)
		a.count("PUT /orders/{id}")
		reply(w, http.StatusOK, map[string]any{"id": r.PathValue("id"), "note": in["note"]})
	})
	mux.Handle("DELETE /orders/{id}", a.auth(func(w http.ResponseWriter, r *http.Request) {
		a.count("DELETE /orders/{id}")
		reply(w, http.StatusOK, map[string]any{"id": r.PathValue("id"), "status": "cancelled"})
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	a.URL = srv.URL
	return a
}

// auth refuses a request without the bearer token before the handler runs.
func (a *API) auth(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+Token {
			a.mu.Lock()
			a.refused = append(a.refused, strings.Join(append(r.Header.Values("Authorization"), r.Header.Values("Cookie")...), ", "))
			a.mu.Unlock()
			reply(w, http.StatusUnauthorized, map[string]any{"error": "unauthorized"})
			return
		}
		h(w, r)
	})
}

func (a *API) count(route string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.executed[route]++
}

// Executed returns how many requests reached the handler of each route of Unsafe (a route
// none reached is absent).
func (a *API) Executed() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.executed)
}

// Refused returns, for each request the credentials check refused before any handler, the
// credentials it carried (its Authorization and Cookie headers, joined): "" for none.
func (a *API) Refused() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.refused)
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// document describes the API: every operation needs the bearer token but sending an email,
// which needs none, and updating an order, which takes it when given; none lists the failures
// it may answer (a plain API's document).
const document = `{
  "openapi": "3.1.0",
  "info": {"title": "plain", "version": "1"},
  "security": [{"bearer": []}],
  "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
  "paths": {
    "/payments": {
      "post": {
        "operationId": "create_payment",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
          "type": "object",
          "required": ["customer", "amount", "currency"],
          "properties": {
            "customer": {"type": "string", "pattern": "^cus_[a-z0-9]+$"},
            "amount": {"type": "integer", "minimum": 1, "maximum": 10000},
            "currency": {"type": "string", "enum": ["usd", "eur"]}
          },
          "additionalProperties": false
        }, "example": {"customer": "cus_ada", "amount": 1200, "currency": "usd"}}}},
        "responses": {"201": {"description": "paid"}}
      }
    },
    "/payments/{id}": {
      "get": {
        "operationId": "get_payment",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^pay_[a-z0-9]+$"}}],
        "responses": {"200": {"description": "the payment"}}
      }
    },
    "/emails": {
      "post": {
        "operationId": "send_email",
        "security": [],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
          "type": "object",
          "required": ["to", "subject"],
          "properties": {
            "to": {"type": "string", "maxLength": 254},
            "subject": {"type": "string", "maxLength": 200}
          }
        }, "example": {"to": "ada@example.com", "subject": "hello"}}}},
        "responses": {"202": {"description": "queued"}}
      }
    },
    "/orders": {
      "get": {
        "operationId": "list_orders",
        "parameters": [
          {"name": "status", "in": "query", "schema": {"type": "string", "enum": ["open", "cancelled"]}},
          {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100}}
        ],
        "responses": {"200": {"description": "the orders"}}
      }
    },
    "/orders/{id}": {
      "put": {
        "operationId": "update_order",
        "security": [{}, {"bearer": []}],
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1}}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
          "type": "object",
          "required": ["note"],
          "properties": {"note": {"type": "string", "maxLength": 500}}
        }}}},
        "responses": {"200": {"description": "updated"}}
      },
      "delete": {
        "operationId": "cancel_order",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1}}],
        "responses": {"200": {"description": "cancelled"}}
      }
    }
  }
}`
