import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/contract/facts.ts";
import { createRunMonitor } from "../../../src/tripwires/monitor.ts";
import { replayAgentEvents } from "../../support/replay-agent-events.ts";
import { exec, sandbox, toolCall } from "./events.ts";

const RUN = "run-redundant";
const read = (seq: number, file: string, digest: string): AgentEvent =>
  toolCall(RUN, seq, "read_file", JSON.stringify({ path: file }), { observation_digest: digest });
const redundancyAlerts = (events: AgentEvent[]) =>
  replayAgentEvents(events).filter((alert) => alert.rule_id === "redundant-steps");

/** Reads of distinct files, then the same reads again: every re-read is redundant. */
function reReads(count: number, between: (seq: number) => AgentEvent | undefined = () => undefined): AgentEvent[] {
  const events: AgentEvent[] = [];
  let seq = 0;
  for (let index = 0; index < count; index++) events.push(read(seq++, `f${index}`, `d${index}`));
  for (let index = 0; index < count; index++) {
    const extra = between(seq);
    if (extra !== undefined) {
      events.push(extra);
      seq++;
    }
    events.push(read(seq++, `f${index}`, `d${index}`));
  }
  return events;
}

describe("redundancy", () => {
  it("alerts once when 5 redundant steps fall within the window", () => {
    const alerts = replayAgentEvents(reReads(6), { redundancy: { minShare: 1 } }).filter(
      (alert) => alert.rule_id === "redundant-steps",
    );
    expect(alerts).toHaveLength(1);
    expect(alerts[0]?.kind).toBe("REDUNDANCY");
    expect(alerts[0]?.evidence).toMatchObject({ seq_from: 6, seq_to: 10, repetitions: 5 });
  });

  it("with defaults, 4 redundant of 10 tool calls (40%) already alerts, once", () => {
    const alerts = redundancyAlerts(reReads(6));
    expect(alerts).toHaveLength(1);
    expect(alerts[0]?.evidence).toMatchObject({ seq_from: 6, seq_to: 9, repetitions: 4 });
  });

  it("publishes the redundant count and share in the run-state summary", () => {
    const monitor = createRunMonitor();
    let summary;
    for (const event of reReads(4)) summary = monitor.process(event).runState;
    expect(summary).toMatchObject({
      run_id: RUN,
      steps_seen: 8,
      tool_calls_seen: 8,
      redundant_steps: 4,
      redundant_share: 0.5,
      last_seq: 7,
    });
  });

  it("a file_write in between resets redundancy", () => {
    expect(redundancyAlerts(reReads(8, (seq) => sandbox(RUN, seq, "file_write", { path: "/work/repo/x" })))).toEqual(
      [],
    );
  });

  it("a non-read-only exec resets redundancy but a read-only one does not", () => {
    expect(redundancyAlerts(reReads(8, (seq) => exec(RUN, seq, "npm run build")))).toEqual([]);
    expect(redundancyAlerts(reReads(8, (seq) => exec(RUN, seq, "ls -la && git status")))).toHaveLength(1);
  });

  it("a different observation digest is not redundant", () => {
    const events = reReads(8).map((event, index) =>
      index >= 8 && event.type === "agent_step" ? { ...event, observation_digest: `changed-${index}` } : event,
    );
    expect(redundancyAlerts(events)).toEqual([]);
  });

  it("the same tool with a different input is not redundant", () => {
    const events = Array.from({ length: 20 }, (_, seq) => read(seq, `file-${seq}`, "same-digest"));
    expect(redundancyAlerts(events)).toEqual([]);
  });

  it("alerts on share once the window has enough steps", () => {
    const alerts = replayAgentEvents(reReads(4), {
      redundancy: { minRedundantSteps: 100, minShare: 0.4, minStepsForShare: 8 },
    }).filter((alert) => alert.rule_id === "redundant-steps");
    expect(alerts).toHaveLength(1);
    expect(alerts[0]?.evidence.seq_to).toBe(7);
  });
});
