// Drives rally with the newer pi coding agent's own RpcClient
// (@earendil-works/pi-coding-agent 1.6, whose folder PI16_DIR names) through
// every command of pi's protocol beyond the retry core (TestPiRpcCommands).
// Environment: PI16_DIR, SHIM (pi-shim.mjs, which runs RALLY_BIN), DIR (the
// project) and URL (a fake LLM that answers every call).
// Prints one JSON line of findings; exits non-zero on the first failure.
import { pathToFileURL } from "node:url";
import path from "node:path";
import fs from "node:fs";

const { RpcClient } = await import(pathToFileURL(path.join(process.env.PI16_DIR, "dist/modes/rpc/rpc-client.js")).href);

function check(cond, what, value) {
  if (!cond) throw new Error(`${what}: ${JSON.stringify(value)}`);
}

const client = new RpcClient({
  cliPath: process.env.SHIM,
  cwd: process.env.DIR,
  args: ["--no-themes", "--no-extensions", "--api", "openai-completions", "--base-url", process.env.URL, "--model", "fake-model"],
});
await client.start();
const out = {};
try {
  // Thinking levels: a model that does not reason has "off" only, and a
  // level set for it stays "off" (pi clamps to what the model supports).
  check(JSON.stringify(await client.getAvailableThinkingLevels()) === '["off"]', "get_available_thinking_levels", await client.getAvailableThinkingLevels());
  await client.setThinkingLevel("high");
  check((await client.getState()).thinkingLevel === "off", "thinking level clamped", await client.getState());
  check((await client.cycleThinkingLevel()) == null, "cycle_thinking_level without reasoning", null);

  // Queue modes.
  await client.setSteeringMode("all");
  await client.setFollowUpMode("all");
  let st = await client.getState();
  check(st.steeringMode === "all" && st.followUpMode === "all", "queue modes", st);
  const q = await client.clearQueue();
  check(Array.isArray(q.steering) && q.steering.length === 0 && Array.isArray(q.followUp), "clear_queue", q);

  // The user's own shell command: its result, and its output on the next prompt.
  const b = await client.bash("echo from-bash; exit 3");
  check(b.output === "from-bash\n" && b.exitCode === 3 && b.cancelled === false && b.truncated === false, "bash", b);
  // abort_bash right behind bash: the server reads them in order, so the
  // abort finds the command whether or not its shell has started yet.
  const t0 = Date.now();
  const long = client.bash("sleep 30");
  await client.abortBash();
  const ab = await long;
  out.abortBashMs = Date.now() - t0;
  check(ab.cancelled === true && out.abortBashMs < 5000, "abort_bash", ab);

  await client.promptAndWait("first question");
  await client.promptAndWait("second question");
  const msgs = await client.getMessages();
  check(msgs.some((m) => m.role === "user" && JSON.stringify(m.content).includes("Ran `echo from-bash; exit 3`")), "bash output joined the context", msgs);
  st = await client.getState();
  const original = st.sessionFile;
  check(typeof original === "string" && fs.existsSync(original), "session file", st);

  // Export.
  const html = await client.exportHtml(path.join(process.env.DIR, "out.html"));
  const page = fs.readFileSync(html.path, "utf8");
  check(page.includes("second question") && !page.includes("<script"), "export_html", html);

  // Entries and tree.
  const entries = await client.getEntries();
  check(entries.entries.length >= 4 && entries.leafId === entries.entries[entries.entries.length - 1].id, "get_entries", entries.leafId);
  const since = await client.getEntries(entries.entries[1].id);
  check(since.entries.length === entries.entries.length - 2, "get_entries since", since.entries.length);
  const tree = await client.getTree();
  check(tree.tree.length === 1 && tree.leafId === entries.leafId, "get_tree", tree.leafId);

  // Fork from the second question: a new file with what came before it.
  const forks = await client.getForkMessages();
  const second = forks.find((m) => m.text === "second question");
  check(forks.length >= 2 && second, "get_fork_messages", forks);
  const before = msgs.length;
  const f = await client.fork(second.entryId);
  check(f.text === "second question" && f.cancelled === false, "fork", f);
  st = await client.getState();
  check(st.sessionFile !== original, "fork serves a new file", st.sessionFile);
  const forked = await client.getMessages();
  check(forked.length < before && !forked.some((m) => m.role === "user" && JSON.stringify(m.content).includes("second question")), "forked context", forked.length);

  // Clone the fork, then switch back to the original.
  const forkFile = st.sessionFile;
  await client.clone();
  st = await client.getState();
  check(st.sessionFile !== forkFile && (await client.getMessages()).length === forked.length, "clone", st.sessionFile);
  const sw = await client.switchSession(original);
  check(sw.cancelled === false, "switch_session", sw);
  check((await client.getMessages()).length === before && (await client.getState()).sessionFile === original, "switched back", null);

  // Commands and models.
  const cmds = await client.getCommands();
  check(Array.isArray(cmds) && cmds.length === 0, "get_commands", cmds);
  const cm = await client.cycleModel();
  check(cm == null || (cm.model && typeof cm.thinkingLevel === "string"), "cycle_model", cm);
  out.ok = true;
} finally {
  await client.stop();
}
console.log(JSON.stringify(out));
