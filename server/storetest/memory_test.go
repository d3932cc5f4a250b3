package storetest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (storetest.Stores, func(time.Duration)) {
		clock := storetest.NewClock()
		return server.NewMemoryStore(server.MemoryOptions{Now: clock.Now}), clock.Advance
	})
}

func TestMemoryStoreBounded(t *testing.T) {
	ctx := context.Background()
	const max, n = 10, 50

	t.Run("challenges", func(t *testing.T) {
		s := server.NewMemoryStore(server.MemoryOptions{MaxEntries: max, Now: storetest.NewClock().Now})
		for i := range n {
			require.NoError(t, s.PutChallenge(ctx, fmt.Sprint("c", i), []byte{byte(i)}, time.Hour))
			require.LessOrEqual(t, s.Len(), max, "after %d puts", i+1)
		}
		assert.Equal(t, max, s.Len())
		// The oldest went, the newest stay.
		_, ok, err := s.TakeChallenge(ctx, "c0")
		require.NoError(t, err)
		assert.False(t, ok, "the first of %d challenges in a store of %d", n, max)
		got, ok, err := s.TakeChallenge(ctx, fmt.Sprint("c", n-1))
		require.NoError(t, err)
		assert.True(t, ok, "the last of %d challenges in a store of %d", n, max)
		assert.Equal(t, []byte{n - 1}, got)
	})

	t.Run("claims", func(t *testing.T) {
		s := server.NewMemoryStore(server.MemoryOptions{MaxEntries: max, Now: storetest.NewClock().Now})
		for i := range n {
			key := fmt.Sprint("k", i)
			_, claimed, err := s.Claim(ctx, key, []byte(key), "owner", time.Hour)
			require.NoError(t, err)
			require.True(t, claimed, "claim %d", i)
			if i%2 == 0 {
				require.NoError(t, s.Complete(ctx, key, "owner", server.StoredResponse{Status: 200}, time.Hour))
			}
			require.LessOrEqual(t, s.Len(), max, "after %d claims", i+1)
		}
		assert.Equal(t, max, s.Len())
		rec, claimed, err := s.Claim(ctx, fmt.Sprint("k", n-1), nil, "probe", time.Hour)
		require.NoError(t, err)
		assert.False(t, claimed, "the last of %d keys in a store of %d was dropped", n, max)
		assert.Equal(t, "owner", rec.Owner)
	})

	t.Run("expired entries are dropped", func(t *testing.T) {
		clock := storetest.NewClock()
		s := server.NewMemoryStore(server.MemoryOptions{MaxEntries: max, Now: clock.Now})
		for i := range 5 {
			require.NoError(t, s.PutChallenge(ctx, fmt.Sprint("c", i), nil, time.Second))
			_, _, err := s.Claim(ctx, fmt.Sprint("k", i), nil, "owner", time.Second)
			require.NoError(t, err)
		}
		require.Equal(t, 10, s.Len())
		clock.Advance(2 * time.Second)

		// Met by a read: dropped.
		_, ok, err := s.TakeChallenge(ctx, "c0")
		require.NoError(t, err)
		assert.False(t, ok, "an expired challenge")
		assert.Equal(t, 9, s.Len(), "after an expired challenge was met")

		// From the oldest end, by a write: all of them.
		require.NoError(t, s.PutChallenge(ctx, "fresh", nil, time.Hour))
		assert.Equal(t, 1, s.Len(), "after a put that followed 9 expired entries")
		_, ok, err = s.TakeChallenge(ctx, "fresh")
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, 0, s.Len())
	})
}
