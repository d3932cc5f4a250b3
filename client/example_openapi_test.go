package client_test

import (
	"fmt"

	"github.com/remedy-go/remedy/client"
)

// Every operation of an OpenAPI 3.x document becomes an Operation: named by its operationId
// (or, without one, as the reference server names it), with the query parameters listed.
// Client.LoadOpenAPI fetches a document and registers them in one step.
func ExampleOperationsFromOpenAPI() {
	doc := []byte(`{
	  "openapi": "3.1.0",
	  "info": {"title": "Orders", "version": "1.0.0"},
	  "paths": {
	    "/v1/orders/{id}": {
	      "parameters": [{"name": "id", "in": "path", "required": true}],
	      "get": {"operationId": "getOrder", "parameters": [{"$ref": "#/components/parameters/Expand"}]}
	    },
	    "/v1/orders": {
	      "get": {"operationId": "listOrders", "parameters": [{"name": "limit", "in": "query"}]},
	      "post": {"operationId": "createOrder", "parameters": [{"name": "Idempotency-Key", "in": "header"}]}
	    },
	    "/v1/orders/{id}/cancel": {"post": {}}
	  },
	  "components": {"parameters": {"Expand": {"name": "expand", "in": "query"}}}
	}`)
	ops, err := client.OperationsFromOpenAPI(doc)
	if err != nil {
		panic(err)
	}
	for _, op := range ops {
		fmt.Println(op.Method, op.Path, op.Name, op.Query)
	}
	// Output:
	// GET /v1/orders listOrders [limit]
	// POST /v1/orders createOrder []
	// GET /v1/orders/{id} getOrder [expand]
	// POST /v1/orders/{id}/cancel post_v1_orders_id_cancel []
}
