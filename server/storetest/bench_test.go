package storetest_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/remedy-go/remedy/server"
)

// BenchmarkMemoryStore measures the memory store's calls as the pipeline makes them: a first
// execution (claim a new key, complete it), a replay (claim a completed key), and a
// confirmation (put a challenge, take it).
func BenchmarkMemoryStore(b *testing.B) {
	ctx := context.Background()
	result := server.StoredResponse{Status: 201, Body: []byte(`{"id":"ord_1"}`)}
	fp := []byte("fingerprint-of-the-payload-0123")
	b.Run("ClaimComplete", func(b *testing.B) {
		// Room for every key of the run: the cost measured is of a store that is not full.
		s := server.NewMemoryStore(server.MemoryOptions{MaxRecords: 1 << 30, ScopeRecords: 1 << 30})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			key := "idem:" + strconv.Itoa(i)
			if _, claimed, err := s.Claim(ctx, "scope", key, fp, "owner", time.Minute); err != nil || !claimed {
				b.Fatal(claimed, err)
			}
			if err := s.Complete(ctx, "scope", key, "owner", result, time.Hour); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Replay", func(b *testing.B) {
		s := server.NewMemoryStore(server.MemoryOptions{})
		s.Claim(ctx, "scope", "idem:k", fp, "owner", time.Minute)
		s.Complete(ctx, "scope", "idem:k", "owner", result, time.Hour)
		b.ReportAllocs()
		for b.Loop() {
			if rec, _, err := s.Claim(ctx, "scope", "idem:k", fp, "other", time.Minute); err != nil || !rec.Completed {
				b.Fatal(err)
			}
		}
	})
	b.Run("Challenge", func(b *testing.B) {
		s := server.NewMemoryStore(server.MemoryOptions{})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			id := "confirm:" + strconv.Itoa(i)
			if err := s.PutChallenge(ctx, "scope", id, fp, time.Minute); err != nil {
				b.Fatal(err)
			}
			if _, ok, err := s.TakeChallenge(ctx, "scope", id); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
}
