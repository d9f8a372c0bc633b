// Drives `rally --mode acp` (RALLY_ARGS, in DIR) with the official ACP
// TypeScript SDK's client (ACP_SDK_DIR) through one prompt whose stream
// drops and is resumed (TestACPStreamResume). Prints one JSON line: the
// prompt's stop reason and every session/update, for the test to judge.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import path from "node:path";

const acp = await import(pathToFileURL(path.join(process.env.ACP_SDK_DIR, "dist/v1/stable/acp.js")).href);
const dir = process.env.DIR;
const child = spawn(process.env.RALLY_BIN, ["--mode", "acp", ...JSON.parse(process.env.RALLY_ARGS)], { cwd: dir, stdio: ["pipe", "pipe", "inherit"] });
const updates = [];
const app = acp.client({ name: "rally-test" })
  .onNotification(acp.methods.client.session.update, (cx) => { updates.push(cx.params.update); });
const conn = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
try {
  await conn.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const s = await conn.agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
  const r = await conn.agent.request(acp.methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text: "tell me" }] });
  console.log(JSON.stringify({ ok: true, stopReason: r.stopReason, updates }));
} finally {
  conn.close();
  child.kill("SIGTERM");
}
