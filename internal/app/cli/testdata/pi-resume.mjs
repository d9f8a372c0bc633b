// Drives rally with the pi coding agent's own RpcClient through a stream
// that drops and is resumed (TestPiRpcClientResume). Environment:
// PI_CODING_AGENT_DIR, RALLY_BIN, SHIM (pi-shim.mjs), DIR (a project whose
// settings turn on retry.streaming "resume" for the provider "fake", a
// Responses API at the fake LLM) and WANT (the whole answer). Prints one
// JSON line of findings; exits non-zero on the first failure.
import { pathToFileURL } from "node:url";
import path from "node:path";

const pkg = process.env.PI_CODING_AGENT_DIR;
const { RpcClient } = await import(pathToFileURL(path.join(pkg, "dist/modes/rpc/rpc-client.js")).href);

function check(cond, what, value) {
  if (!cond) throw new Error(`${what}: ${JSON.stringify(value)}`);
}

const client = new RpcClient({
  cliPath: process.env.SHIM,
  cwd: process.env.DIR,
  args: ["--no-session", "--provider", "fake", "--model", "fake-model"],
});
await client.start();
const out = {};
try {
  // promptAndWait resolves at the first agent_end: a pi client that knows
  // nothing of resume must get the whole answer in what it collected.
  const events = await client.promptAndWait("tell me", undefined, 30000);
  const types = events.map((e) => e.type);
  out.types = [...new Set(types)];
  const isAsst = (e) => e.message && e.message.role === "assistant";
  const starts = events.filter((e) => e.type === "message_start" && isAsst(e));
  const ends = events.filter((e) => e.type === "message_end" && isAsst(e));
  check(starts.length === 1 && ends.length === 1, "one assistant message_start and message_end", types);
  check(ends[0].message.stopReason === "stop" && !ends[0].message.errorMessage, "message_end is a clean stop", ends[0].message);
  check(!types.includes("message_discarded"), "no message_discarded", types);
  check(types.filter((t) => t === "agent_end").length === 1, "one agent_end", types);
  const agentEnd = events.find((e) => e.type === "agent_end");
  check(agentEnd.willRetry !== true, "agent_end does not announce a retry", agentEnd);

  // pi's sequence: every update of the message comes between its start
  // and its end, its partial only grows, and the deltas add up to the
  // final text with nothing twice.
  const si = events.indexOf(starts[0]), ei = events.indexOf(ends[0]);
  let text = "", prev = "";
  for (const [i, e] of events.entries()) {
    if (e.type !== "message_update") continue;
    check(i > si && i < ei, "message_update outside its message", { i, si, ei });
    const ev = e.assistantMessageEvent;
    if (ev.type === "text_delta") text += ev.delta;
    const partial = (e.message.content || []).filter((c) => c.type === "text").map((c) => c.text).join("");
    check(partial.startsWith(prev), "the partial never shrinks", { prev, partial });
    prev = partial;
  }
  const final = ends[0].message.content.filter((c) => c.type === "text").map((c) => c.text).join("");
  check(text === process.env.WANT && final === process.env.WANT, "deltas add up to the answer once", { text, final });

  // rally's additions, in order between two updates of the same message.
  const rs = events.findIndex((e) => e.type === "auto_retry_start");
  const sr = events.findIndex((e) => e.type === "stream_resumed");
  const re = events.findIndex((e) => e.type === "auto_retry_end");
  check(rs > si && rs < sr && sr < re && re < ei, "auto_retry_start, stream_resumed, auto_retry_end inside the message", types);
  const start = events[rs], end = events[re], resumed = events[sr];
  check(start.errorClass === "transient" && start.resume === "cursor" && start.attempt === 1, "auto_retry_start", start);
  check(end.success === true && end.attempt === 1, "auto_retry_end", end);
  check(resumed.attempt === 1 && resumed.cursor && typeof resumed.gapMs === "number", "stream_resumed", resumed);
  check((await client.getLastAssistantText()) === process.env.WANT, "get_last_assistant_text", null);
  const st = await client.getState();
  check(st.isRetrying === false && st.retryAttempt === 0 && st.messageCount === 2, "get_state after the resume", st);
  out.ok = true;
} finally {
  await client.stop();
}
console.log(JSON.stringify(out));
