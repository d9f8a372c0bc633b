// session/load of a session file whose rally was stopped during a wait for
// a usage limit's reset, driven by the official ACP SDK's client
// (ACP_SDK_DIR), for TestACPLoadInterruptedWait. RALLY_ARGS (a JSON list)
// are the agent's flags; FILE the session file; DIR its project folder.
// MODE "resume": the load says it resumes, and the interrupted prompt's
// answer (WANT) streams after the wait, then that of a session/prompt sent
// during it (NEXT); "note": the
// load only says how to resume and nothing more streams; "cancel":
// session/cancel during the resumed wait ends it at once ("Retry
// cancelled."). Prints one JSON line; exits non-zero on the first failure.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import path from "node:path";

const acp = await import(pathToFileURL(path.join(process.env.ACP_SDK_DIR, "dist/v1/stable/acp.js")).href);
const check = (cond, what, value) => { if (!cond) throw new Error(`${what}: ${JSON.stringify(value)}`); };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const child = spawn(process.env.RALLY_BIN, ["--mode", "acp", ...JSON.parse(process.env.RALLY_ARGS)], {
  cwd: process.env.DIR, stdio: ["pipe", "pipe", "inherit"],
});
const updates = [];
const app = acp.client({ name: "rally-wait-test" })
  .onNotification(acp.methods.client.session.update, (cx) => { updates.push(cx.params.update); });
const conn = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
const cx = conn.agent;
const text = () => updates.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");
const until = async (what, ok, ms = 20000) => {
  for (const t0 = Date.now(); !ok(); await sleep(5)) {
    if (Date.now() - t0 > ms) throw new Error(`no ${what} within ${ms} ms: ${JSON.stringify(text())}`);
  }
};

const out = {};
try {
  await cx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const sessionId = process.env.FILE;
  await cx.request(acp.methods.agent.session.load, { sessionId, cwd: process.env.DIR, mcpServers: [] });
  const note = updates.find((u) => u._meta?.rally?.interruptedWait);
  check(note, "a chunk about the interrupted wait", updates);
  out.note = note.content.text.trim();
  out.resumed = note._meta.rally.interruptedWait.resumed;
  const mode = process.env.MODE;
  if (mode === "resume") {
    // A prompt sent during the resumed wait goes on after it.
    const r = await cx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "next?" }] });
    check(r.stopReason === "end_turn", "a prompt sent during the resumed wait", r);
    const all = text();
    check(all.indexOf(process.env.WANT) >= 0 && all.indexOf(process.env.WANT) < all.indexOf(process.env.NEXT), "the resumed answer, then the prompt's", all);
  } else if (mode === "note") {
    await sleep(500);
    check(!text().includes("Retrying"), "no wait without --wait-for-reset", text());
  } else {
    await until("retry line", () => /Retrying \(1\/3\)/.test(text()));
    const c0 = process.hrtime.bigint();
    await cx.notify(acp.methods.agent.session.cancel, { sessionId });
    await until("cancel line", () => text().includes("Retry cancelled."), 2000);
    out.cancelMs = Number(process.hrtime.bigint() - c0) / 1e6;
  }
  out.text = text();
  out.ok = true;
} finally {
  conn.close?.();
  child.kill("SIGTERM");
}
console.log(JSON.stringify(out));
