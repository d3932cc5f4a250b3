// Package rpcpb is the code protoc generates from orders.proto for the RPC frameworks the
// recordings run: protobuf messages, a gRPC service, its grpc-gateway, a connect handler and
// a twirp server. It is committed, so that running the recordings needs no protoc; the
// directive below regenerates it (protoc with protoc-gen-go, protoc-gen-go-grpc,
// protoc-gen-grpc-gateway, protoc-gen-connect-go and protoc-gen-twirp on PATH).
package rpcpb

//go:generate protoc -I . --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative --grpc-gateway_out=. --grpc-gateway_opt=paths=source_relative,grpc_api_configuration=orders_gateway.yaml --connect-go_out=. --connect-go_opt=paths=source_relative --twirp_out=. --twirp_opt=paths=source_relative orders.proto
