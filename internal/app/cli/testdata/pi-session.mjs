// Opens a session file rally wrote with the pi coding agent's own
// SessionManager (TestPiLoadsRallySession) and prints what pi read of it:
// its entries and the context it would send. Environment:
// PI_CODING_AGENT_DIR (the installed npm package), SESSION_FILE.
import { pathToFileURL } from "node:url";
import path from "node:path";

const pkg = process.env.PI_CODING_AGENT_DIR;
const { SessionManager } = await import(pathToFileURL(path.join(pkg, "dist/core/session-manager.js")).href);
const sm = SessionManager.open(process.env.SESSION_FILE);
const ctx = sm.buildSessionContext();
console.log(JSON.stringify({
  id: sm.getSessionId(),
  entries: sm.getEntries().length,
  messages: ctx.messages.map((m) => ({ role: m.role, stopReason: m.stopReason ?? "" })),
}));
