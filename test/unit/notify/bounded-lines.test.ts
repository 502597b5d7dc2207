import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { boundedLines, type BoundedLine } from "../../../src/notify/bounded-lines.ts";

async function collect(content: string | Buffer, maxBytes: number): Promise<BoundedLine[]> {
  const path = join(mkdtempSync(join(tmpdir(), "agentops-lines-")), "file.ndjson");
  writeFileSync(path, content);
  const lines: BoundedLine[] = [];
  for await (const line of boundedLines(path, maxBytes)) lines.push(line);
  return lines;
}

describe("boundedLines", () => {
  it("yields every line with its number, the last one without a newline too", async () => {
    expect(await collect("a\n\nbc\nd", 10)).toEqual([
      { line: 1, text: "a" },
      { line: 2, text: "" },
      { line: 3, text: "bc" },
      { line: 4, text: "d" },
    ]);
  });

  it("reports a line over the bound by number, keeps none of it, and goes on", async () => {
    const long = "x".repeat(3 * 65_536 + 5);
    expect(await collect(`ok\n${long}\nafter\n`, 1_000)).toEqual([
      { line: 1, text: "ok" },
      { line: 2, tooLong: true },
      { line: 3, text: "after" },
    ]);
  });

  it("decodes characters split across read chunks", async () => {
    const text = `${"é".repeat(70_000)}\n`;
    const [first] = await collect(text, 1_000_000);
    expect(first).toEqual({ line: 1, text: "é".repeat(70_000) });
  });
});
