package client_test

import (
	"testing"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/pacertest"
)

func TestMemoryPacer(t *testing.T) {
	t.Parallel()
	pacertest.Run(t, func(t *testing.T) client.Pacer { return client.NewPacer() })
	t.Run("ZeroValue", func(t *testing.T) {
		t.Parallel()
		pacertest.Run(t, func(t *testing.T) client.Pacer { return new(client.MemoryPacer) })
	})
}
