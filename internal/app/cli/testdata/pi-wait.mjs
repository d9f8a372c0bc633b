// Drives a wait for a usage limit's reset with pi's own RpcClient
// (TestPiRpcClientResetWait). Environment: PI_CODING_AGENT_DIR, RALLY_BIN,
// SHIM (pi-shim.mjs), LONG_DIR/LONG_URL (a limit that resets in 2 hours)
// and SHORT_DIR/SHORT_URL (one that resets in 2 seconds, then an answer);
// both projects turn retry.waitForReset on with no margin. Prints one JSON
// line of findings; exits non-zero on the first failure.
import { check, next, start } from "./pi-helpers.mjs";

const pairs = (seen) => [seen.filter((e) => e.type === "auto_retry_start").length, seen.filter((e) => e.type === "auto_retry_end").length];
const out = {};

// 1. A two-hour wait: one auto_retry_start with the whole delay, a
// heartbeat, and abort_retry ends it at once with one auto_retry_end.
const long = start(process.env.LONG_DIR, process.env.LONG_URL);
await long.start();
try {
  const seen = [];
  const off = long.onEvent((e) => seen.push(e));
  const retryStart = next(long, ["auto_retry_start"]);
  const beat = next(long, ["retry_heartbeat"]);
  await long.prompt("refactor it overnight");
  const rs = await retryStart;
  check(rs.attempt === 1 && rs.errorClass === "usage_limit" && rs.delayMs > 7190000 && rs.delayMs <= 7200000, "auto_retry_start of the long wait", rs);
  const hb = await beat;
  check(hb.attempt === 1 && hb.remainingMs > 7180000 && hb.remainingMs <= rs.delayMs, "retry_heartbeat", hb);
  const st = await long.getState();
  check(st.isRetrying === true && st.retryAttempt === 1, "get_state during the wait", st);
  const retryEnd = next(long, ["auto_retry_end"]);
  const settled = next(long, ["agent_settled"]);
  const t0 = process.hrtime.bigint();
  await long.abortRetry();
  const re = await retryEnd;
  out.abortRetryMs = Number(process.hrtime.bigint() - t0) / 1e6;
  check(re.success === false && re.attempt === 1 && re.finalError === "Retry cancelled", "auto_retry_end", re);
  await settled;
  off();
  check(pairs(seen).join() === "1,1", "one auto_retry_start/auto_retry_end pair", seen.map((e) => e.type));
} finally {
  await long.stop();
}

// 2. A short reset waited out: one pair, ending in success.
const short = start(process.env.SHORT_DIR, process.env.SHORT_URL);
await short.start();
try {
  const seen = [];
  const off = short.onEvent((e) => seen.push(e));
  const settled = next(short, ["agent_settled"]);
  await short.prompt("hello");
  await settled;
  off();
  const rs = seen.find((e) => e.type === "auto_retry_start");
  const re = seen.find((e) => e.type === "auto_retry_end");
  check(rs && rs.delayMs > 1000 && rs.delayMs <= 2000, "auto_retry_start of the short wait", rs);
  check(re && re.success === true && re.attempt === 1, "auto_retry_end", re);
  check(pairs(seen).join() === "1,1", "one pair", seen.map((e) => e.type));
  const text = await short.getLastAssistantText();
  check(text === "Back after the reset", "the answer", text);
} finally {
  await short.stop();
}

console.log(JSON.stringify({ ok: true, ...out }));
