package schemaissue_test

import (
	"fmt"
	"testing"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"github.com/stretchr/testify/assert"

	"github.com/remedy-go/remedy/internal/schemaissue"
)

// Keyword names the keyword of every kind as KeywordPath does.
func TestKeyword(t *testing.T) {
	t.Parallel()
	for _, k := range []jsv.ErrorKind{&kind.Type{}, &kind.Enum{}, &kind.Const{}, &kind.Format{}, &kind.Required{},
		&kind.AdditionalProperties{}, &kind.Minimum{}, &kind.Maximum{}, &kind.ExclusiveMinimum{},
		&kind.ExclusiveMaximum{}, &kind.MinLength{}, &kind.MaxLength{}, &kind.Pattern{}, &kind.MinItems{},
		&kind.MaxItems{}, &kind.UniqueItems{}, &kind.FalseSchema{}, &kind.Not{}, &kind.MultipleOf{},
		&kind.Dependency{Prop: "p"}, &kind.RefCycle{}} {
		want := ""
		if kp := k.KeywordPath(); len(kp) > 0 {
			want = kp[0]
		}
		assert.Equal(t, want, schemaissue.Keyword(k), fmt.Sprintf("%T", k))
	}
}

func TestCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		k    jsv.ErrorKind
		want string
	}{
		{&kind.Type{}, "type"},
		{&kind.ExclusiveMinimum{}, "exclusive_minimum"},
		{&kind.AdditionalProperties{}, "additional_properties"},
		{&kind.MultipleOf{}, "multiple_of"},
		{&kind.FalseSchema{}, "not_allowed"},
		{&kind.Not{}, "not"},
		{&kind.InvalidJsonValue{}, "invalid_value"},
		{&kind.RefCycle{}, "ref_cycle"},
	} {
		assert.Equal(t, tc.want, schemaissue.Code(tc.k, schemaissue.Keyword(tc.k)), fmt.Sprintf("%T", tc.k))
	}
	assert.Equal(t, "dependent_schemas", schemaissue.Spell("dependentSchemas"))
	assert.Equal(t, "ref", schemaissue.Spell("$ref"))
	assert.Equal(t, "content_schema", schemaissue.Spell("content-schema"))
}
