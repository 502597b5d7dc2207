import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createCommandAnalyser } from "../../../src/tripwires/commands/command-analyser.ts";

const analyser = createCommandAnalyser({ protectedBranches: ["main"], cacheSize: 0 });
const context = { cwd: "/work/repo", workspaceRoot: "/work/repo", home: undefined };

describe("command analysis never throws", { timeout: 60_000 }, () => {
  it("on arbitrary strings and shell-ish fragments", () => {
    const fragment = fc.constantFrom(
      "rm",
      "-rf",
      "/",
      "$(",
      ")",
      "`",
      "'",
      '"',
      "\\",
      "|",
      "&&",
      ";",
      "<<EOF\n",
      "${IFS}",
      "~",
      "*",
      "bash -c",
      "xargs",
      "sudo",
      "\n",
      "#",
      "{",
      "}",
      "(",
      "DROP TABLE x",
      "git push -f",
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc.array(fragment, { maxLength: 30 }).map((parts) => parts.join(" ")),
        ),
        (command) => {
          const analysis = analyser.analyseShell(command, context);
          expect(Array.isArray(analysis.findings)).toBe(true);
          expect(Array.isArray(analyser.analyseSqlStatement(command).findings)).toBe(true);
        },
      ),
    );
  });

  it("on pathologically deep nesting", () => {
    const deep = `${"$(".repeat(5000)}rm -rf /${")".repeat(5000)}`;
    expect(() => analyser.analyseShell(deep, context)).not.toThrow();
  });
});
