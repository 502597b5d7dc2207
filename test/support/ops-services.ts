import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const script = fileURLToPath(new URL("../../ops/services.sh", import.meta.url));

/** Runs `ops/services.sh <command>`, its progress streamed to our stderr; resolves the exit code. */
export function runOpsServices(command: "up" | "down" | "status", quiet = false): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", [script, command], { cwd: repoRoot, stdio: ["ignore", quiet ? "ignore" : "inherit", quiet ? "ignore" : "inherit"] });
    child.on("error", reject);
    child.on("exit", (code) => resolve(code ?? 1));
  });
}

/** True when ops/ already runs both services, healthy: then they are someone else's to stop. */
export async function opsServicesRunning(): Promise<boolean> {
  return (await runOpsServices("status", true)) === 0;
}
