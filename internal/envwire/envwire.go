// Package envwire lets the reference server reach one thing package remedy keeps unexported:
// the canonical encoding of an envelope whose raw JSON members the caller vouches for, which
// copies them as they are instead of parsing each again (remedy.Envelope.MarshalJSON cannot
// know where a raw member came from, so it checks every one). The server's refusals are made
// of raw JSON it wrote or checked itself; writing them through the envelope's own encoder keeps
// one encoder for both.
package envwire

// AppendTrusted is set by package remedy when it is initialized: it appends env.MarshalJSON()
// for env, a *remedy.Envelope, to b (growing b once at most), without checking its raw JSON
// members. The caller must know each is valid JSON that MarshalJSON would keep (nested at most
// 64 deep, no number longer than 64 bytes, no key named twice), else the output may not be.
var AppendTrusted func(b []byte, env any) []byte
