// pi's RpcClient runs `node <cliPath> --mode rpc …`; this file, as cliPath, runs rally instead.
import { spawn } from "node:child_process";
const rally = spawn(process.env.RALLY_BIN, process.argv.slice(2), { stdio: "inherit" });
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => rally.kill(sig));
rally.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
