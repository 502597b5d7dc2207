import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const script = fileURLToPath(new URL("../../ops/services.sh", import.meta.url));

/** Runs `ops/services.sh <command>`, its progress streamed to our stderr; resolves the exit code. */
export function runOpsServices(command: "up" | "down" | "status", quiet = false): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", [script, command], {
      cwd: repoRoot,
      stdio: ["ignore", quiet ? "ignore" : "inherit", quiet ? "ignore" : "inherit"],
    });
    child.on("error", reject);
    child.on("exit", (code) => resolve(code ?? 1));
  });
}

/** True when ops/ already runs both services, healthy: then they are someone else's to stop. */
export async function opsServicesRunning(): Promise<boolean> {
  return (await runOpsServices("status", true)) === 0;
}

/** The ports ops/ uses, honouring the same AGENTOPS_*_PORT overrides as ops/lib/*.sh. */
export function opsPorts(env: NodeJS.ProcessEnv = process.env): { kafka: number; registry: number } {
  return {
    kafka: Number(env["AGENTOPS_KAFKA_PORT"] ?? 19092),
    registry: Number(env["AGENTOPS_REGISTRY_PORT"] ?? 18081),
  };
}

/** ops/'s state directory (AGENTOPS_SERVICES_DIR, else .services). */
export function opsServicesDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env["AGENTOPS_SERVICES_DIR"] ?? ".services";
  return isAbsolute(dir) ? dir : join(repoRoot, dir);
}

/** The text of ops/'s security.json (secured listeners, CA, client certificate, SCRAM users), if the broker has them. */
export function opsSecurity(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const file = join(opsServicesDir(env), "kafka/security/security.json");
  return existsSync(file) ? readFileSync(file, "utf8") : undefined;
}
