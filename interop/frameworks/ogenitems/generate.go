// Package ogenitems is the server ogen generates from openapi.json (the items API the
// frameworks' recordings use), committed so that the recordings do not depend on running the
// generator.
package ogenitems

//go:generate go run github.com/ogen-go/ogen/cmd/ogen@v1.24.0 --target . --package ogenitems --clean openapi.json
