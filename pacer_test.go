package remedy_test

import (
	"testing"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/pacertest"
)

func TestMemoryPacer(t *testing.T) {
	t.Parallel()
	pacertest.Run(t, func(t *testing.T) remedy.Pacer { return remedy.NewPacer() })
	t.Run("ZeroValue", func(t *testing.T) {
		t.Parallel()
		pacertest.Run(t, func(t *testing.T) remedy.Pacer { return new(remedy.MemoryPacer) })
	})
}
