// Package retry is rally's retry policy: it classifies a failed model call,
// reads the wait the server asked for, and decides whether to retry, switch
// credential or model, or give up. It is pure and clock-free: callers pass in
// the current time and a source of randomness, so every rule can be
// table-tested. It does no I/O and imports nothing of rally: a caller that
// wants to keep the errors no rule recognised asks Verdict.Signal.Fallback
// and writes them itself (the session layer's unclassified log does).
//
// # The order of the signals
//
// Classify (the one classifier; Inspect and the policy call it) reads a
// failure's signals in this order, and the first that speaks decides. Each
// step is placed where it is because a later signal would lie about the
// failures the earlier one recognises:
//
//  1. A size against a context limit (overflow codes, then any wording that
//     states a token count or length against a context, prompt, input or
//     model limit). First, because an overflow arrives under every status
//     and code (400, 413, a 429 whose request exceeds the whole per-minute
//     budget, llama.cpp's 500, an editor's JSON-RPC -32603 around DashScope's
//     400), and its cure, compaction, is neither a retry nor giving up.
//  2. x-should-retry. The server's explicit word beats our reading of it,
//     except that a usage limit stays a usage limit (retrying sooner than
//     the reset only burns attempts).
//  3. Typed codes that name the cause: billing and plan codes
//     (insufficient_quota, quota_exceeded), then a 402 status. Before
//     anything transient, because they come with 429 and 403 as often as
//     with 402.
//  4. The families of meaning, before the status, because proxies and
//     gateways put fatal causes behind retryable statuses: billing in any
//     words (a 500 that says "insufficient balance"); causes no wait fixes
//     (a 429 around Gemini's BlockedReasonProhibitedContent, a 502 "Cannot
//     POST /…" page, an x509 error, "access denied", "model requires more
//     system memory", a missing model or item); and quotas by period (a
//     day, a plan, a free tier) rather than a rate per minute, whatever
//     status carries them. A period phrase denied by a "not" ("temporarily
//     limiting requests (not your usage limit)") does not count.
//  5. The size of a stated wait: a rate limit that asks for an hour or more
//     is a plan or daily quota, whatever its wording.
//  6. Transient codes, then the retryable statuses (408, 409, 425, 429,
//     5xx). The status comes this late because it is often the wrapper's,
//     and the body says what the upstream meant.
//  7. Go transport errors by type: a bad certificate or an unknown host is
//     fatal, a reset, refused or timed-out connection transient.
//  8. Capacity words (Mistral sends "Service tier capacity exceeded" as a
//     400), typed fatal codes, then any other 4xx: fatal.
//  9. Words, once no code or status decided: the network taxonomy
//     (dropped, refused, reset and timed-out connections as Go, Node, Bun,
//     Python, Rust and Windows clients and the common proxies print them),
//     server faults, rate-limit words, then a wait stated in text ("Please
//     wait 8s"; "Come back in 3h 47m" is an hour or more, a usage limit).
//     They come after every status because a status, when there is one, is
//     the server's own verdict on this request.
//  10. The text fallback: generic retry wording and bare status numbers
//     that stand as words. Last, because it knows the least.
//  11. Nothing matched: Fatal, so an unknown error is never retried by
//     accident.
//
// Verdict.Signal names the step that decided. SignalText (step 10) and
// SignalNone (step 11) mean no family recognised the failure: those are
// the errors worth reporting, and the ones rally logs as new.
//
// Text is matched after lowercasing and folding whitespace, in one pass of
// a phrase automaton built on first use (not at process start), so the
// order above costs one scan of the message, not one per phrase.
package retry
