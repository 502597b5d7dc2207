import { describe, expect, it } from "vitest";
import { createCommandAnalyser } from "../../../src/tripwires/commands/command-analyser.ts";
import { AnalysisDeadlineError, withinDeadline } from "../../../src/tripwires/commands/analysis-deadline.ts";
import { SHELL_BOUNDS } from "../../../src/tripwires/commands/shell-bounds.ts";

/**
 * The shell analysis is bounded: beyond its bounds a line is unparsed with the reason, never
 * judged harmless; nesting costs linear time; a live deadline stops it and is never remembered.
 */
const context = { cwd: "/work/repo", workspaceRoot: "/work/repo", home: "/home/dev" };
const analyser = createCommandAnalyser({ protectedBranches: ["main"], cacheSize: 64 });
const analyse = (command: string) => analyser.analyseShell(command, context);

describe("bounds of the shell analysis", () => {
  it("reports a line over a bound as unparsed, naming the bound", () => {
    expect(analyse(`ls${" && true".repeat(SHELL_BOUNDS.maxBytes / 8)}`).unparsedReason).toMatch(
      /over the 16384-byte bound/,
    );
    expect(analyse(`${"(".repeat(65)}ls${")".repeat(65)}`).unparsedReason).toMatch(
      /nests 65 brackets deep, over the bound of 64/,
    );
    expect(analyse(`ls${" | cat".repeat(129)}`).unparsedReason).toMatch(/129 pipes, over the bound of 128/);
    expect(analyse(`ls${" | cat".repeat(128)}`).unparsed).toBe(false);
  });

  it("does not count brackets or pipes inside single quotes", () => {
    expect(analyse(`echo '${"(|".repeat(200)}'`).unparsed).toBe(false);
  });

  it("reports wrappers nested past what it unwraps, and a reserved word in command position, as unparsed", () => {
    expect(analyse(`${"sudo ".repeat(7)}rm -rf /`).findings.map((finding) => finding.ruleId)).toEqual([
      "fs-delete-critical-path",
    ]);
    expect(analyse(`${"sudo ".repeat(9)}rm -rf /`)).toMatchObject({
      findings: [],
      unparsed: true,
      unparsedReason: expect.stringMatching(/nest too deep/) as unknown,
    });
    expect(analyse("sudo if true; then rm -rf /; fi")).toMatchObject({
      unparsed: true,
      unparsedReason: expect.stringMatching(/`if` stands where a command should be/) as unknown,
    });
    expect(analyse("sudo { rm -rf /; }").unparsed).toBe(true);
    expect(analyse("if true; then ls; fi").unparsed).toBe(false);
  });

  it("folds nested `$(echo …)` in linear time", () => {
    const started = performance.now();
    const analysis = analyse(`${"echo $(".repeat(40)}rm -rf /${")".repeat(40)}`);
    expect(analysis.findings.map((finding) => finding.ruleId)).toEqual(["fs-delete-critical-path"]);
    // Reading each level twice doubled the work per level: depth 20 took 20 s.
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("stops at a deadline without remembering the cut-short result", () => {
    const command = `rm -rf ./build${"; true".repeat(2_000)}`;
    expect(() => withinDeadline(performance.now() - 1, () => analyse(command))).toThrow(AnalysisDeadlineError);
    expect(analyse(command)).toMatchObject({ findings: [], unparsed: false });
  });
});
