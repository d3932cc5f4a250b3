package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// The checks the suite makes, written here so that a package importing the suite for its
// store's tests does not import an assertion library with it. Each takes an optional message:
// a format and its arguments. The must forms stop the test (t.Fatal); the others report the
// failure and go on (t.Error), so that one run shows every rule a store breaks.

// message formats msg, an optional format and its arguments, as the start of a failure.
func message(msg []any) string {
	if len(msg) == 0 {
		return ""
	}
	if f, ok := msg[0].(string); ok {
		return fmt.Sprintf(f, msg[1:]...) + ": "
	}
	return fmt.Sprint(msg...) + ": "
}

// equal reports whether want and got are equal: byte slices by content, the rest deeply.
func equal(want, got any) bool {
	if w, ok := want.([]byte); ok {
		if g, ok := got.([]byte); ok {
			return bytes.Equal(w, g)
		}
	}
	return reflect.DeepEqual(want, got)
}

// isEmpty reports whether v is its type's zero value or an empty collection.
func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array, reflect.String, reflect.Chan:
		return r.Len() == 0
	case reflect.Pointer:
		return r.IsNil()
	}
	return r.IsZero()
}

func mustNoError(t testing.TB, err error, msg ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%sunexpected error: %v", message(msg), err)
	}
}

func mustTrue(t testing.TB, ok bool, msg ...any) {
	t.Helper()
	if !ok {
		t.Fatalf("%swant true", message(msg))
	}
}

func mustFalse(t testing.TB, ok bool, msg ...any) {
	t.Helper()
	if ok {
		t.Fatalf("%swant false", message(msg))
	}
}

func mustEqual(t testing.TB, want, got any, msg ...any) {
	t.Helper()
	if !equal(want, got) {
		t.Fatalf("%swant %#v, got %#v", message(msg), want, got)
	}
}

func mustNotEqual(t testing.TB, unwanted, got any, msg ...any) {
	t.Helper()
	if equal(unwanted, got) {
		t.Fatalf("%sgot %#v, which it must not be", message(msg), got)
	}
}

func mustNotNil(t testing.TB, v any, msg ...any) {
	t.Helper()
	if v == nil || reflect.ValueOf(v).Kind() == reflect.Pointer && reflect.ValueOf(v).IsNil() {
		t.Fatalf("%swant a value, got nil", message(msg))
	}
}

func mustError(t testing.TB, err error, msg ...any) {
	t.Helper()
	if err == nil {
		t.Fatalf("%swant an error, got none", message(msg))
	}
}

func mustErrorIs(t testing.TB, err, target error, msg ...any) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%swant an error that is %v, got %v", message(msg), target, err)
	}
}

func checkEqual(t testing.TB, want, got any, msg ...any) bool {
	t.Helper()
	if !equal(want, got) {
		t.Errorf("%swant %#v, got %#v", message(msg), want, got)
		return false
	}
	return true
}

func checkTrue(t testing.TB, ok bool, msg ...any) bool {
	t.Helper()
	if !ok {
		t.Errorf("%swant true", message(msg))
	}
	return ok
}

func checkFalse(t testing.TB, ok bool, msg ...any) bool {
	t.Helper()
	if ok {
		t.Errorf("%swant false", message(msg))
	}
	return !ok
}

func checkEmpty(t testing.TB, v any, msg ...any) bool {
	t.Helper()
	if !isEmpty(v) {
		t.Errorf("%swant it empty, got %#v", message(msg), v)
		return false
	}
	return true
}

func checkError(t testing.TB, err error, msg ...any) bool {
	t.Helper()
	if err == nil {
		t.Errorf("%swant an error, got none", message(msg))
		return false
	}
	return true
}

func checkErrorIs(t testing.TB, err, target error, msg ...any) bool {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%swant an error that is %v, got %v", message(msg), target, err)
		return false
	}
	return true
}
