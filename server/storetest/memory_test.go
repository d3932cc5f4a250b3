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
	storetest.Run(t, func(t *testing.T, l storetest.Limits) (storetest.Stores, func(time.Duration)) {
		clock := storetest.NewClock()
		return server.NewMemoryStore(server.MemoryOptions{
			ScopeChallenges: l.ScopeChallenges, ScopeRecords: l.ScopeRecords, Now: clock.Now,
		}), clock.Advance
	})
}

// TestMemoryStoreBounded: each space is bounded as a whole, across scopes; a full space
// refuses, it forgets nothing that is live, and the other space is untouched.
func TestMemoryStoreBounded(t *testing.T) {
	ctx := context.Background()
	const max, n = 10, 50

	t.Run("challenges", func(t *testing.T) {
		s := server.NewMemoryStore(server.MemoryOptions{MaxChallenges: max, Now: storetest.NewClock().Now})
		_, claimed, err := s.Claim(ctx, "s", "k", []byte("fp"), "owner", time.Hour)
		require.NoError(t, err)
		require.True(t, claimed)
		for i := range n {
			// Each challenge in a scope of its own: the bound is the space's.
			err := s.PutChallenge(ctx, fmt.Sprint("s", i), fmt.Sprint("c", i), []byte{byte(i)}, time.Hour)
			if i < max {
				require.NoError(t, err, "put %d", i)
			} else {
				require.ErrorIs(t, err, server.ErrStoreFull, "put %d in a space of %d", i, max)
			}
		}
		assert.Equal(t, max+1, s.Len())
		// The first stay; the record too.
		got, ok, err := s.TakeChallenge(ctx, "s0", "c0")
		require.NoError(t, err)
		assert.True(t, ok, "the first of %d challenges in a space of %d", n, max)
		assert.Equal(t, []byte{0}, got)
		rec, claimed, err := s.Claim(ctx, "s", "k", nil, "probe", time.Hour)
		require.NoError(t, err)
		assert.False(t, claimed, "the record, after the challenges filled their space")
		assert.Equal(t, "owner", rec.Owner)
		// A taken challenge made room for one.
		require.NoError(t, s.PutChallenge(ctx, "s", "again", nil, time.Hour))
		require.ErrorIs(t, s.PutChallenge(ctx, "s", "more", nil, time.Hour), server.ErrStoreFull)
	})

	t.Run("records", func(t *testing.T) {
		s := server.NewMemoryStore(server.MemoryOptions{MaxRecords: max, Now: storetest.NewClock().Now})
		for i := range n {
			key := fmt.Sprint("k", i)
			_, claimed, err := s.Claim(ctx, fmt.Sprint("s", i), key, []byte(key), "owner", time.Hour)
			if i >= max {
				require.ErrorIs(t, err, server.ErrStoreFull, "claim %d in a space of %d", i, max)
				require.False(t, claimed)
				continue
			}
			require.NoError(t, err)
			require.True(t, claimed, "claim %d", i)
			if i%2 == 0 {
				require.NoError(t, s.Complete(ctx, fmt.Sprint("s", i), key, "owner", server.StoredResponse{Status: 200}, time.Hour))
			}
		}
		assert.Equal(t, max, s.Len())
		for i := range max {
			rec, claimed, err := s.Claim(ctx, fmt.Sprint("s", i), fmt.Sprint("k", i), nil, "probe", time.Hour)
			require.NoError(t, err)
			assert.False(t, claimed, "key %d of a full space was dropped", i)
			assert.Equal(t, "owner", rec.Owner)
			assert.Equal(t, i%2 == 0, rec.Completed, "key %d", i)
		}
		require.NoError(t, s.PutChallenge(ctx, "s", "c", nil, time.Hour), "a challenge, when the records fill their space")
	})

	t.Run("quota above the bound", func(t *testing.T) {
		s := server.NewMemoryStore(server.MemoryOptions{MaxRecords: 3, ScopeRecords: 100, Now: storetest.NewClock().Now})
		for i := range 3 {
			_, claimed, err := s.Claim(ctx, "s", fmt.Sprint("k", i), nil, "owner", time.Hour)
			require.NoError(t, err)
			require.True(t, claimed)
		}
		_, _, err := s.Claim(ctx, "s", "k3", nil, "owner", time.Hour)
		require.ErrorIs(t, err, server.ErrStoreFull)
	})

	t.Run("expired entries are dropped", func(t *testing.T) {
		clock := storetest.NewClock()
		s := server.NewMemoryStore(server.MemoryOptions{MaxChallenges: 5, MaxRecords: 5, Now: clock.Now})
		for i := range 5 {
			require.NoError(t, s.PutChallenge(ctx, "s", fmt.Sprint("c", i), nil, time.Second))
			_, _, err := s.Claim(ctx, "s", fmt.Sprint("k", i), nil, "owner", time.Duration(i+1)*time.Second)
			require.NoError(t, err)
		}
		require.Equal(t, 10, s.Len())
		clock.Advance(2 * time.Second)

		// Met by a read: dropped.
		_, ok, err := s.TakeChallenge(ctx, "s", "c0")
		require.NoError(t, err)
		assert.False(t, ok, "an expired challenge")
		assert.Equal(t, 9, s.Len(), "after an expired challenge was met")

		// By a write into the space: all of its expired entries, soonest first.
		require.NoError(t, s.PutChallenge(ctx, "s", "fresh", nil, time.Hour))
		assert.Equal(t, 1+5, s.Len(), "after a put that followed 4 expired challenges")
		_, claimed, err := s.Claim(ctx, "s", "new", nil, "owner", time.Hour)
		require.NoError(t, err)
		require.True(t, claimed)
		assert.Equal(t, 1+4, s.Len(), "after a claim that followed 2 expired records (of 5 leases, 1 to 5 s)")
	})
}

func TestMemoryJobs(t *testing.T) {
	storetest.RunJobs(t, func(t *testing.T, scopeJobs int) (server.JobStore, func(time.Duration)) {
		clock := storetest.NewClock()
		return server.NewMemoryStore(server.MemoryOptions{ScopeJobs: scopeJobs, Now: clock.Now}), clock.Advance
	})
}
