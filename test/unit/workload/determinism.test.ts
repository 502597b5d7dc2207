import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateWorkloadLines, workloadBatches, BATCH_TASKS } from "../../../src/workload/workload.ts";
import { writeWorkload } from "../../../src/workload/writer.ts";
import { generateCommand } from "../../../src/cli/commands/generate.ts";
import { UsageError } from "../../../src/cli/command.ts";
import { defaultSample, readSampleText } from "./workload-support.ts";

const dir = mkdtempSync(join(tmpdir(), "agentops-workload-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("workload determinism", () => {
  it("gives byte-identical output for the same seed and size", () => {
    const a = generateWorkloadLines({ seed: 7, tasks: 120 }).lines.join("\n");
    const b = generateWorkloadLines({ seed: 7, tasks: 120 }).lines.join("\n");
    expect(a.length).toBeGreaterThan(10_000);
    expect(b).toBe(a);
  });

  it("gives different output for a different seed", () => {
    const a = generateWorkloadLines({ seed: 7, tasks: 120 }).lines;
    const b = generateWorkloadLines({ seed: 8, tasks: 120 }).lines;
    expect(b.join("\n")).not.toBe(a.join("\n"));
    // Not merely shifted: most lines differ.
    const shared = new Set(a);
    expect(b.filter((line) => shared.has(line)).length).toBeLessThan(b.length / 10);
  });

  it("writes the same bytes to a file as it generates in memory, twice over", async () => {
    const first = join(dir, "a.ndjson");
    const second = join(dir, "b.ndjson");
    const statsA = await writeWorkload(first, { seed: 3, tasks: 450 });
    await writeWorkload(second, { seed: 3, tasks: 450 });
    const text = readFileSync(first, "utf8");
    expect(readFileSync(second, "utf8")).toBe(text);
    const inMemory = generateWorkloadLines({ seed: 3, tasks: 450 });
    expect(text).toBe(`${inMemory.lines.join("\n")}\n`);
    expect(statsA.lines).toBe(inMemory.lines.length);
    expect(statsA.bytes).toBe(Buffer.byteLength(text));
    expect(statsA.tasks).toBe(450);
  });

  it("keeps the committed sample equal to the default generation (seed 42, 400 tasks)", () => {
    expect(readSampleText()).toBe(`${defaultSample().lines.join("\n")}\n`);
  });

  it("sizes --facts runs by line count, one bounded batch at a time", () => {
    let lines = 0;
    let batches = 0;
    let largest = 0;
    for (const batch of workloadBatches({ seed: 1, facts: 30_000 })) {
      lines += batch.lines.length;
      batches += 1;
      largest = Math.max(largest, batch.stats.tasks);
    }
    expect(lines).toBeGreaterThanOrEqual(30_000);
    expect(lines).toBeLessThan(30_000 + 400 * 25);
    expect(batches).toBeGreaterThan(1);
    expect(largest).toBeLessThanOrEqual(BATCH_TASKS);
  });
});

describe("agentops generate", () => {
  it("writes the file and reports a summary", async () => {
    const out = join(dir, "nested", "cli.ndjson");
    const code = await generateCommand.run(["--out", out, "--tasks", "30", "--seed", "5"]);
    expect(code).toBe(0);
    expect(readFileSync(out, "utf8")).toBe(`${generateWorkloadLines({ seed: 5, tasks: 30 }).lines.join("\n")}\n`);
  });

  it("names the flag and the fix for a bad value", async () => {
    await expect(generateCommand.run(["--out", join(dir, "x.ndjson"), "--tasks", "many"])).rejects.toThrow(UsageError);
    await expect(generateCommand.run(["--tasks", "10"])).rejects.toThrow(/--out: is required/);
  });
});
