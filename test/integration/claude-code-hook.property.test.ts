import fc from "fast-check";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decisionOf, documentedInput, startHookServer, type HookServerProcess } from "../support/hook-process.ts";
import { waitFor } from "../support/processes.ts";

/**
 * Generated hostile commands against one real `--listen` server with the default 500 ms deadline:
 * large, deep, nested and odd-Unicode lines that embed a destructive command get deny or ask
 * (undecided), never allow, each within the deadline; and after each of them the same server
 * still denies a plain `rm -rf /`.
 */
const DEADLINE_MS = 500;
const TIMER_SLACK_MS = 250;
const destructive = fc.constantFrom(
  "rm -rf /",
  "sudo rm -rf /",
  "rm -rf ~",
  "find / -delete",
  "git push --force origin main",
  "chmod -R 777 /",
  "rm -rf .git",
);

const quoteForShell = (script: string): string => `'${script.replaceAll("'", "'\\''")}'`;

/** One layer around a command that still runs it. */
const wrappers: readonly ((inner: string) => string)[] = [
  (inner) => `( ${inner} )`,
  (inner) => `{ ${inner}; }`,
  (inner) => `echo $(${inner})`,
  (inner) => `true && ${inner}`,
  (inner) => `${inner} && true`,
  (inner) => `${inner} | cat`,
  (inner) => `true; ${inner}`,
  (inner) => `if true; then ${inner}; fi`,
  (inner) => `bash -c ${quoteForShell(inner)}`,
  (inner) => `sudo ${inner}`,
];

const ODD_CHARACTERS = ["\u200b", "\u202e", "\ufeff", "\u0000", "\ud800", "\udfff", "😀", "ﬃ", "\u0301"];

/** Text that is no shell syntax: zero-width and bidi marks, lone surrogates, astral characters, NUL. */
const oddText = fc
  .array(fc.oneof(fc.constantFrom(...ODD_CHARACTERS), fc.string({ unit: "binary", maxLength: 8 })), { maxLength: 40 })
  .map((parts) => parts.join(""));

const layer = fc.record({
  wrapper: fc.integer({ min: 0, max: wrappers.length - 1 }),
  times: fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 100, max: 6_000 })),
});

/** A destructive command wrapped in layers, each repeated up to thousands of times, with odd text around. */
const hostileCommand = fc
  .record({
    core: destructive,
    layers: fc.array(layer, { minLength: 1, maxLength: 4 }),
    comment: oddText,
    filler: fc.oneof(
      fc.constant(""),
      fc.integer({ min: 1, max: 20_000 }).map((count) => " && true".repeat(count)),
    ),
  })
  .map(({ core, layers, comment, filler }) => {
    let command: string = core;
    for (const { wrapper, times } of layers) {
      const wrap = wrappers[wrapper] ?? ((inner: string) => inner);
      // bash -c quoting doubles the line per layer: a few layers of it are already deep.
      const repeat = wrapper === 8 ? Math.min(times, 3) : times;
      for (let i = 0; i < repeat; i++) command = wrap(command);
    }
    return `${command}${filler} # ${comment}`;
  });

let server: HookServerProcess;

beforeAll(async () => {
  server = await startHookServer(["--workers", "2"]);
});

afterAll(() => {
  server.stop();
});

describe("hook --listen on generated hostile commands", () => {
  it("never allows a line embedding a destructive command, answers in time, keeps denying `rm -rf /`", async () => {
    let call = 0;
    await fc.assert(
      fc.asyncProperty(hostileCommand, async (command) => {
        const id = `prop-${call++}`;
        const answer = decisionOf(await server.call(documentedInput(command, "property", id)));
        expect(["deny", "ask"]).toContain(answer.decision);
        expect(answer.reason).not.toBe("");
        const plain = await server.call(documentedInput("rm -rf /", "property-plain", `${id}-plain`));
        expect(decisionOf(plain).decision).toBe("deny");
      }),
      { numRuns: 60, seed: 31, endOnFailure: true },
    );
    const decisions = join(server.spool, "hook-decisions.ndjson");
    const elapsed = await waitFor("every generated call recorded", () => {
      const text = existsSync(decisions) ? readFileSync(decisions, "utf8").trim() : "";
      const lines =
        text === ""
          ? []
          : text.split("\n").map((line) => JSON.parse(line) as { session_id: string; elapsed_ms: number });
      const generated = lines.filter((line) => line.session_id === "property");
      return generated.length >= call ? generated.map((line) => line.elapsed_ms) : undefined;
    });
    // From the request's arrival to the answer, measured by the server. The slack is for timers
    // firing late on a shared two-core machine; bench:hook records the worst case measured.
    expect(Math.max(...elapsed)).toBeLessThan(DEADLINE_MS + TIMER_SLACK_MS);
  });
});
