// What the scripts that drive rally with pi's RpcClient share: the
// client class, a check that throws, waiting for an event, and starting
// rally (through pi-shim.mjs) in a project against a fake LLM.
import { pathToFileURL } from "node:url";
import path from "node:path";

export const pkg = process.env.PI_CODING_AGENT_DIR;
const { RpcClient } = await import(pathToFileURL(path.join(pkg, "dist/modes/rpc/rpc-client.js")).href);

export function check(cond, what, value) {
  if (!cond) throw new Error(`${what}: ${JSON.stringify(value)}`);
}

// next resolves with the first event of one of the types from now on.
export function next(client, types, timeoutMs = 20000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { off(); reject(new Error(`no ${types} within ${timeoutMs} ms`)); }, timeoutMs);
    const off = client.onEvent((e) => {
      if (types.includes(e.type)) { clearTimeout(timer); off(); resolve(e); }
    });
  });
}

// start returns a client for rally in dir, on the fake LLM at url.
export function start(dir, url) {
  return new RpcClient({
    cliPath: process.env.SHIM,
    cwd: dir,
    args: ["--no-session", "--api", "openai-completions", "--base-url", url, "--model", "fake-model"],
  });
}
