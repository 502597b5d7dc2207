import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { commands } from "../../../src/cli/commands/index.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const NODE = process.execPath;

/**
 * The modules a fresh process loads to prepare `agentops run` with only the engine's role: the
 * command's module and the processors of the roles asked for, as bin/agentops does.
 */
function modulesLoadedForEngineRun(): string[] {
  const script = `
    import { registerHooks } from "node:module";
    const loaded = [];
    registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
    const { commands } = await import("./src/cli/commands/index.ts");
    await commands.find((entry) => entry.name === "run").load();
    const { processorsFor } = await import("./src/stream/runtime/services.ts");
    const { DEFAULT_ENGINE_CONFIG } = await import("./src/metrics/engine-config.ts");
    const { shippedCatalog } = await import("./src/catalog/metric-definitions.ts");
    await processorsFor("engine", { engine: DEFAULT_ENGINE_CONFIG }, shippedCatalog());
    process.stdout.write(JSON.stringify(loaded));
  `;
  const run = spawnSync(NODE, ["--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8" });
  if (run.status !== 0) throw new Error(run.stderr);
  return (JSON.parse(run.stdout) as string[]).map((url) => url.replace(`file://${ROOT}`, ""));
}

describe("agentops commands", () => {
  it("each entry loads the command it names", async () => {
    for (const entry of commands) expect((await entry.load()).name).toBe(entry.name);
  });

  it(
    "an engine-only `run` loads neither the run monitor's shell parser nor the other commands' modules",
    { timeout: 60_000 },
    () => {
      const loaded = modulesLoadedForEngineRun();
      expect(loaded).toContain("src/stream/processors/engine.ts");
      expect(
        loaded.filter(
          (path) =>
            path.startsWith("src/tripwires/") ||
            path.startsWith("src/ingest/otlp/") ||
            path.startsWith("src/ingest/importers/") ||
            /web-tree-sitter/.test(path),
        ),
      ).toEqual([]);
    },
  );
});
