package client

import (
	"encoding/json"
	"testing"
)

func TestKeyring(t *testing.T) {
	var k keyring
	a := json.RawMessage(`{"currency":"USD","amount":5}`)
	first := k.key(a)
	if len(first) != 26 {
		t.Fatalf("key %q: want 26 characters of base32", first)
	}
	if k.key(a) != first {
		t.Fatal("an unchanged payload keeps its key")
	}
	b := json.RawMessage(`{"currency":"usd","amount":5}`)
	second := k.key(b)
	if second == first {
		t.Fatal("a changed payload gets a new key")
	}
	if k.key(json.RawMessage(`{ "amount": 5, "currency": "USD" }`)) != first {
		t.Fatal("the same document in another key order and spacing is the same payload")
	}
	if k.key(b) != second {
		t.Fatal("going back to a payload gives back its key")
	}

	caller := keyring{caller: "order-42"}
	if caller.key(a) != "order-42" {
		t.Fatal("the caller's key is used as is for the caller's payload")
	}
	if got := caller.key(b); got == "order-42" {
		t.Fatal("the caller's key is not sent with a payload the caller did not write")
	}
}

func TestSameJSON(t *testing.T) {
	if !sameJSON(json.RawMessage(`{"a":1,"b":[1,2]}`), json.RawMessage(`{"b":[1,2],"a":1.0}`)) {
		t.Error("order, spacing and number spelling do not make another payload")
	}
	if sameJSON(json.RawMessage(`{"a":1}`), json.RawMessage(`{"a":2}`)) {
		t.Error("a changed value makes another payload")
	}
}
