import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/contract/facts.ts";
import type { TripwireAlert } from "../../../src/tripwires/alert.ts";
import { replayAgentEvents } from "../../support/replay-agent-events.ts";
import { toolCall } from "./events.ts";

/** Builds a run from a string of action letters: "ABABAB" = tool calls A, B, A, B, A, B. */
function run(pattern: string, runId = "run-loop", failing = ""): AgentEvent[] {
  return [...pattern].map((letter, seq) =>
    toolCall(runId, seq, "shell", JSON.stringify({ cmd: letter }), {
      status: failing.includes(letter) ? "error" : "ok",
      observation_digest: failing.includes(letter) ? `error-of-${letter}` : undefined,
    }),
  );
}

const loops = (alerts: TripwireAlert[]): TripwireAlert[] => alerts.filter((alert) => alert.rule_id === "loop-cycle");

describe("loop detection", () => {
  it("alerts when a cycle of 2 repeats 3 times back to back, with evidence", () => {
    const [alert, ...rest] = loops(replayAgentEvents(run("xABABAB")));
    expect(rest).toEqual([]);
    expect(alert?.kind).toBe("LOOP");
    expect(alert?.evidence).toEqual({ seq_from: 1, seq_to: 6, repetitions: 3, cycle_length: 2 });
    expect(alert?.event_time).toBe(run("xABABAB")[6]?.event_time);
  });

  it("finds cycles of 1 and of 8", () => {
    expect(loops(replayAgentEvents(run("AAA")))[0]?.evidence.cycle_length).toBe(1);
    expect(loops(replayAgentEvents(run("ABCDEFGH".repeat(3))))[0]?.evidence.cycle_length).toBe(8);
  });

  it("does not alert on a cycle repeated only twice", () => {
    expect(loops(replayAgentEvents(run("ABAB")))).toEqual([]);
    expect(loops(replayAgentEvents(run("ABCDEFGHI".repeat(3))))).toEqual([]); // 9 > max cycle 8
  });

  it("does not alert when the same tool runs with different inputs", () => {
    expect(loops(replayAgentEvents(run("ABCDEFGHIJKL")))).toEqual([]);
  });

  it("alerts once per loop episode, and again for a new loop after the first ends", () => {
    expect(loops(replayAgentEvents(run("ABABABABABABAB")))).toHaveLength(1);
    const twoEpisodes = loops(replayAgentEvents(run("ABABABxCDCDCD")));
    expect(twoEpisodes.map((alert) => alert.evidence.seq_from)).toEqual([0, 7]);
  });

  it("honours configured thresholds", () => {
    expect(loops(replayAgentEvents(run("ABABAB"), { loop: { minRepetitions: 4 } }))).toEqual([]);
    expect(loops(replayAgentEvents(run("ABAB"), { loop: { minRepetitions: 2 } }))).toHaveLength(1);
  });

  it("judges the seq-sorted window, so out-of-order arrival still finds the loop", () => {
    const events = run("ABABAB");
    const shuffled = [events[0], events[2], events[1], events[3], events[5], events[4]].filter(
      (event) => event !== undefined,
    );
    expect(loops(replayAgentEvents(shuffled))).toHaveLength(1);
  });

  it("a repetition with a new observation is reading, not looping: SWE-agent paging (scroll_down ×3 over new lines) stays quiet, the same answer three times alerts", () => {
    const paging = [0, 1, 2].map((seq) =>
      toolCall("run-page", seq, "scroll_down", '{"command":"scroll_down"}', {
        observation_digest: `sha256:window-${seq}`,
      }),
    );
    expect(loops(replayAgentEvents(paging))).toEqual([]);
    const stuck = [0, 1, 2].map((seq) =>
      toolCall("run-stuck", seq, "open", '{"command":"open f.py 1575"}', { observation_digest: "sha256:same-window" }),
    );
    expect(loops(replayAgentEvents(stuck))).toHaveLength(1);
  });

  it("generated: a cycle alerts iff every repetition answers as before (the same digest, or none reported)", () => {
    // Each position of the period answers "same" (one digest throughout), "none" (no digest) or
    // "fresh" (a new digest every repetition); one fresh position breaks the cycle.
    const answer = fc.constantFrom("same", "none", "fresh");
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 3, max: 5 }),
        fc.array(answer, { minLength: 8, maxLength: 8 }),
        (length, repetitions, answers) => {
          const events: AgentEvent[] = [];
          for (let rep = 0; rep < repetitions; rep++) {
            for (let position = 0; position < length; position++) {
              const kind = answers[position];
              const digest =
                kind === "none" ? undefined : kind === "same" ? `sha256:p${position}` : `sha256:p${position}-r${rep}`;
              events.push(
                toolCall("run-gen", events.length, "shell", JSON.stringify({ cmd: `c${position}` }), {
                  observation_digest: digest,
                }),
              );
            }
          }
          const expected = answers.slice(0, length).includes("fresh") ? 0 : 1;
          expect(loops(replayAgentEvents(events))).toHaveLength(expected);
        },
      ),
      { seed: 20261130, numRuns: 300 },
    );
  });

  it("ignores messages and plans between tool calls", () => {
    const events = run("ABABAB").flatMap((event, index) => [
      event,
      toolCall("run-loop", 100 + index, "x", "", { kind: "message", tool: undefined }),
    ]);
    expect(loops(replayAgentEvents(events))).toHaveLength(1);
  });
});

describe("failing-step repetition", () => {
  const failing = (alerts: TripwireAlert[]): TripwireAlert[] =>
    alerts.filter((alert) => alert.rule_id === "loop-failing-step");

  it("alerts when the same action fails 3 times, even interleaved", () => {
    const [alert, ...rest] = failing(replayAgentEvents(run("FxFyF", "r", "F")));
    expect(rest).toEqual([]);
    expect(alert?.evidence).toMatchObject({ seq_from: 0, seq_to: 4, repetitions: 3 });
  });

  it("does not alert when a success of that action comes in between", () => {
    const events = run("FxFyF", "r", "F");
    const success = toolCall("r", 2, "shell", JSON.stringify({ cmd: "F" }), { status: "ok" });
    expect(
      failing(
        replayAgentEvents([events[0], events[1], success, events[3], events[4]].filter((event) => event !== undefined)),
      ),
    ).toEqual([]);
  });

  it("does not alert for two failures or for different failing actions", () => {
    expect(failing(replayAgentEvents(run("FxF", "r", "F")))).toEqual([]);
    expect(failing(replayAgentEvents(run("FGH", "r", "FGH")))).toEqual([]);
  });

  it("alerts once per failing streak", () => {
    expect(failing(replayAgentEvents(run("FFFFFFF", "r", "F")))).toHaveLength(1);
  });
});
