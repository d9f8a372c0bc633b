// Drives `rally --mode acp` with the official ACP TypeScript SDK's client
// (@agentclientprotocol/sdk, whose folder ACP_SDK_DIR names), or, with
// AGENT=pi-acp, drives the pi-acp adapter (PI_ACP_BIN) with rally as its
// `pi` (TestACPClient, TestPiACP). Each scenario has its own project folder
// and fake LLM: PLAIN_* answers every call, RETRY_* fails once with a 503
// (retry.baseDelayMs 1), SLOW_* fails every call (baseDelayMs 5000),
// TOOL_* asks for a bash call twice (tools.confirm ["bash"]).
// Prints one JSON line of findings; exits non-zero on the first failure.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import path from "node:path";

const acp = await import(pathToFileURL(path.join(process.env.ACP_SDK_DIR, "dist/v1/stable/acp.js")).href);
const viaPiACP = process.env.AGENT === "pi-acp";

function check(cond, what, value) {
  if (!cond) throw new Error(`${what}: ${JSON.stringify(value)}`);
}

// connect starts the agent in dir and returns the SDK's client context,
// the updates it received, and a way to answer permission requests.
async function connect(dir, url) {
  const rallyArgs = ["--api", "openai-completions", "--base-url", url, "--model", "fake-model"];
  let child;
  if (viaPiACP) {
    // pi-acp spawns `$PI_ACP_PI_COMMAND --mode rpc --no-themes`: a script
    // that runs rally with the fake provider's flags.
    child = spawn(process.execPath, [process.env.PI_ACP_BIN], {
      cwd: dir,
      env: { ...process.env, PI_ACP_PI_COMMAND: process.env.PI_WRAPPER, RALLY_FLAGS: rallyArgs.join(" ") },
      stdio: ["pipe", "pipe", "inherit"],
    });
  } else {
    child = spawn(process.env.RALLY_BIN, ["--mode", "acp", ...rallyArgs], { cwd: dir, stdio: ["pipe", "pipe", "inherit"] });
  }
  const updates = [];
  const state = { answer: "allow", asked: 0 };
  const app = acp.client({ name: "rally-test" })
    .onNotification(acp.methods.client.session.update, (cx) => { updates.push(cx.params.update); })
    .onRequest(acp.methods.client.session.requestPermission, (cx) => {
      state.asked++;
      const opts = cx.params.options;
      const want = state.answer === "allow" ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"];
      const o = opts.find((x) => want.includes(x.kind));
      return { outcome: { outcome: "selected", optionId: o.optionId } };
    });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const conn = app.connect(stream);
  const cx = conn.agent;
  const init = await cx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  // close resolves once the agent has exited: the next step may open the
  // same session in a new process, and a session stays locked until the
  // process holding it is gone (a client that respawns at once would see
  // "the session is open in another rally process").
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return { child, conn, cx, updates, state, init, close: () => { conn.close(); child.kill("SIGTERM"); return exited; } };
}

const text = (updates, kind = "agent_message_chunk") =>
  updates.filter((u) => u.sessionUpdate === kind && u.content?.type === "text").map((u) => u.content.text).join("");

// once reports whether want appears exactly once in got (pi-acp adds its
// own line breaks around messages).
const once = (got, want) => got.split(want).length === 2;

const out = {};

// 1. A plain answer, streamed once; 2. a second prompt in the same session.
{
  const a = await connect(process.env.PLAIN_DIR, process.env.PLAIN_URL);
  try {
    check(a.init.agentCapabilities?.loadSession === true, "initialize loadSession", a.init);
    const s = await a.cx.request(acp.methods.agent.session.new, { cwd: process.env.PLAIN_DIR, mcpServers: [] });
    const r1 = await a.cx.request(acp.methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text: "first question" }] });
    check(r1.stopReason === "end_turn", "first prompt", r1);
    check(once(text(a.updates), process.env.DEFAULT_TEXT), "the answer streamed once", text(a.updates));
    a.updates.length = 0;
    const r2 = await a.cx.request(acp.methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text: "second question" }] });
    check(r2.stopReason === "end_turn" && once(text(a.updates), process.env.DEFAULT_TEXT), "second prompt", text(a.updates));
    out.sessionId = s.sessionId;
  } finally {
    await a.close();
  }
  // 3. session/load of that session, in a new agent process: its history.
  const b = await connect(process.env.PLAIN_DIR, process.env.PLAIN_URL);
  try {
    await b.cx.request(acp.methods.agent.session.load, { sessionId: out.sessionId, cwd: process.env.PLAIN_DIR, mcpServers: [] });
    const said = text(b.updates, "user_message_chunk");
    check(said.includes("first question") && said.includes("second question"), "loaded user messages", said);
    check(text(b.updates).includes(process.env.DEFAULT_TEXT), "loaded answers", text(b.updates));
    b.updates.length = 0;
    const r3 = await b.cx.request(acp.methods.agent.session.prompt, { sessionId: out.sessionId, prompt: [{ type: "text", text: "third" }] });
    check(r3.stopReason === "end_turn", "a prompt after load", r3);
  } finally {
    await b.close();
  }
}

// 4. A 503, retried, with the retry visible.
{
  const a = await connect(process.env.RETRY_DIR, process.env.RETRY_URL);
  try {
    const s = await a.cx.request(acp.methods.agent.session.new, { cwd: process.env.RETRY_DIR, mcpServers: [] });
    const r = await a.cx.request(acp.methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text: "hello" }] });
    check(r.stopReason === "end_turn", "retried prompt", r);
    const all = text(a.updates);
    // rally says what failed; pi-acp words the line its own way, without it.
    const line = viaPiACP ? /Retrying \(attempt 1\/3/ : /Retrying \(1\/3\) in \d+s: .*(503|overload)/i;
    check(line.test(all), "a visible retry line", all);
    check(once(all, "Recovered after a retry") && all.indexOf("Recovered") > all.search(/Retrying/), "the answer after the retry", all);
    if (!viaPiACP) {
      const meta = a.updates.find((u) => u._meta?.rally?.retry);
      check(meta && meta._meta.rally.retry.attempt === 1 && meta._meta.rally.retry.errorClass === "transient", "retry _meta", meta);
    }
  } finally {
    await a.close();
  }
}

// 5. session/cancel during a 5 s backoff ends the prompt "cancelled" at once.
{
  const a = await connect(process.env.SLOW_DIR, process.env.SLOW_URL);
  try {
    const s = await a.cx.request(acp.methods.agent.session.new, { cwd: process.env.SLOW_DIR, mcpServers: [] });
    const p = a.cx.request(acp.methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text: "hello" }] });
    const t0 = Date.now();
    while (!/Retrying/.test(text(a.updates))) {
      if (Date.now() - t0 > 20000) throw new Error("no retry line within 20 s: " + JSON.stringify(a.updates));
      await new Promise((r) => setTimeout(r, 5));
    }
    const c0 = process.hrtime.bigint();
    await a.cx.notify(acp.methods.agent.session.cancel, { sessionId: s.sessionId });
    const r = await p;
    out.cancelMs = Number(process.hrtime.bigint() - c0) / 1e6;
    check(r.stopReason === "cancelled", "cancelled prompt", r);
    // The backoff is 5 s: a cancel that ends the prompt before it shows
    // the cancel reached the wait. How fast is rally bench's abort figure
    // (the test logs it), not a bound for a loaded machine.
    check(out.cancelMs < 4000, "cancel before the 5 s backoff ends", out.cancelMs);
  } finally {
    await a.close();
  }
}

// 6. A permission request for a tools.confirm tool, answered yes, then no.
{
  const a = await connect(process.env.TOOL_DIR, process.env.TOOL_URL);
  try {
    const s = await a.cx.request(acp.methods.agent.session.new, { cwd: process.env.TOOL_DIR, mcpServers: [] });
    a.state.answer = "allow";
    let r = await a.cx.request(acp.methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text: "run it" }] });
    check(r.stopReason === "end_turn" && a.state.asked === 1, "allowed prompt", { r, asked: a.state.asked });
    let done = a.updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    check(done.length === 1 && JSON.stringify(done[0]).includes("acp-allowed"), "the allowed tool ran", a.updates);
    a.updates.length = 0;
    a.state.answer = "reject";
    r = await a.cx.request(acp.methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text: "run it again" }] });
    check(r.stopReason === "end_turn" && a.state.asked === 2, "rejected prompt", { r, asked: a.state.asked });
    const failed = a.updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
    check(failed.length === 1 && JSON.stringify(failed[0]).includes("declined"), "the rejected tool did not run", a.updates);
  } finally {
    await a.close();
  }
}

out.ok = true;
console.log(JSON.stringify(out));
process.exit(0);
