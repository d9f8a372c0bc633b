// Drives rally with the pi coding agent's own RpcClient (TestPiRpcClient).
// Environment: PI_CODING_AGENT_DIR (the installed npm package), RALLY_BIN,
// SHIM (pi-shim.mjs), and for the two rally processes SLOW_DIR/SLOW_URL
// (retry.baseDelayMs 5000, every call overloaded) and FAST_DIR/FAST_URL
// (baseDelayMs 1, one overloaded call then an answer), and OVER_DIR/OVER_URL
// (an answer, then an overflow that the provider repeats after compaction).
// Prints one JSON line of findings; exits non-zero on the first failure.
import path from "node:path";
import fs from "node:fs";
import { pkg, check, next, start } from "./pi-helpers.mjs";

const out = {};

// 1. A retry wait, seen in get_state, cancelled by abort_retry.
const slow = start(process.env.SLOW_DIR, process.env.SLOW_URL);
await slow.start();
try {
  let st = await slow.getState();
  check(st.model && st.model.id === "fake-model" && st.model.provider, "get_state model", st.model);
  check(st.autoRetryEnabled === true && st.isRetrying === false && st.retryAttempt === 0, "get_state retry fields", st);
  check(st.thinkingLevel === "off" && st.followUpMode === "one-at-a-time" && st.isStreaming === false, "get_state", st);
  await slow.setAutoRetry(true);

  const retryStart = next(slow, ["auto_retry_start"]);
  const firstEnd = next(slow, ["agent_end"]);
  await slow.prompt("hello");
  const end1 = await firstEnd;
  check(end1.willRetry === true, "agent_end before the retry", end1);
  const rs = await retryStart;
  check(rs.attempt === 1 && rs.maxAttempts === 3 && rs.delayMs === 5000 && /503|overload/i.test(rs.errorMessage), "auto_retry_start", rs);
  st = await slow.getState();
  check(st.isRetrying === true && st.retryAttempt === 1 && st.isStreaming === false && st.messageCount === 1, "get_state during the wait", st);

  const retryEnd = next(slow, ["auto_retry_end"]);
  const settled = next(slow, ["agent_settled"]);
  const t0 = process.hrtime.bigint();
  await slow.abortRetry();
  const re = await retryEnd;
  out.abortRetryMs = Number(process.hrtime.bigint() - t0) / 1e6;
  check(re.success === false && re.attempt === 1 && re.finalError === "Retry cancelled", "auto_retry_end", re);
  await settled;
  st = await slow.getState();
  check(st.isRetrying === false && st.retryAttempt === 0, "get_state after abort_retry", st);

  // Auto-retry off: the failure ends the prompt at once.
  await slow.setAutoRetry(false);
  const events = [];
  const off = slow.onEvent((e) => events.push(e.type));
  const settled2 = next(slow, ["agent_settled"]);
  await slow.prompt("again");
  await settled2;
  off();
  check(!events.includes("auto_retry_start"), "no retry with auto-retry off", events);
  st = await slow.getState();
  check(st.autoRetryEnabled === false, "autoRetryEnabled after set_auto_retry false", st);
} finally {
  await slow.stop();
}

// 2. A retry that succeeds, as pi's helpers see it.
const fast = start(process.env.FAST_DIR, process.env.FAST_URL);
await fast.start();
try {
  const seen = [];
  const off = fast.onEvent((e) => seen.push(e));
  const settled = next(fast, ["agent_settled"]);
  await fast.prompt("hello");
  await settled;
  off();
  const types = seen.map((e) => e.type);
  const rs = seen.find((e) => e.type === "auto_retry_start");
  const re = seen.find((e) => e.type === "auto_retry_end");
  check(rs && rs.attempt === 1 && rs.delayMs === 1, "auto_retry_start", rs);
  check(re && re.success === true && re.attempt === 1, "auto_retry_end", re);
  check(types.filter((t) => t === "agent_start").length === 2, "two runs", types);
  const upd = seen.find((e) => e.type === "message_update");
  check(upd && upd.assistantMessageEvent && upd.assistantMessageEvent.partial && upd.message.role === "assistant", "message_update", upd);
  const text = await fast.getLastAssistantText();
  check(text === "Recovered after a retry", "get_last_assistant_text", text);
  const msgs = await fast.getMessages();
  check(msgs.length === 2 && msgs[0].role === "user" && msgs[1].role === "assistant", "get_messages", msgs);
  const stats = await fast.getSessionStats();
  check(stats.totalMessages === 2 && typeof stats.tokens.total === "number", "get_session_stats", stats);
  const models = await fast.getAvailableModels();
  check(Array.isArray(models) && models[0].id === "fake-model", "get_available_models", models);
  await fast.setSessionName("compat");
  check((await fast.getState()).sessionName === "compat", "set_session_name", null);
  const ns = await fast.newSession();
  check(ns && ns.cancelled === false, "new_session", ns);
  out.events = types.length;
} finally {
  await fast.stop();
}

// 3. An overflow that the provider repeats after compaction: one
// compaction, then the prompt ends as pi ends it, in pi's own words.
const over = start(process.env.OVER_DIR, process.env.OVER_URL);
await over.start();
try {
  let settled = next(over, ["agent_settled"]);
  await over.prompt("first");
  await settled;
  const seen = [];
  const off = over.onEvent((e) => seen.push(e));
  settled = next(over, ["agent_settled"]);
  await over.prompt("second");
  await settled;
  off();
  const order = seen
    .filter((e) => ["agent_end", "compaction_start", "compaction_end", "auto_retry_start", "agent_settled"].includes(e.type))
    .map((e) => (e.type === "agent_end" || e.type === "compaction_end" ? `${e.type}(${e.willRetry})` : e.type));
  const want = ["agent_end(true)", "compaction_start", "compaction_end(true)", "agent_end(false)", "compaction_end(false)", "agent_settled"];
  check(order.join(" ") === want.join(" "), "events of a repeated overflow", order);
  const ends = seen.filter((e) => e.type === "compaction_end");
  check(ends.every((e) => e.reason === "overflow") && ends[0].result && ends[0].result.summary, "the compaction", ends[0]);
  const last = ends[ends.length - 1];
  const piSource = fs.readFileSync(path.join(pkg, "dist/core/agent-session.js"), "utf8");
  check(last.aborted === false && /^Context overflow recovery failed/.test(last.errorMessage) && piSource.includes(JSON.stringify(last.errorMessage)),
    "the last compaction_end, in pi's words", last);
  out.overflowEvents = order.length;
} finally {
  await over.stop();
}

console.log(JSON.stringify({ ok: true, ...out }));
