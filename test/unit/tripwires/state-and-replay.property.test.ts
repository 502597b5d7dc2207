import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/contract/facts.ts";
import { canonicalJson } from "../../../src/contract/canonical-json.ts";
import type { TripwireAlert } from "../../../src/tripwires/alert.ts";
import { compareAlerts } from "../../../src/tripwires/alert.ts";
import { createRunMonitor, inMemoryRunStates } from "../../../src/tripwires/monitor.ts";
import { replayAgentEvents } from "../../support/replay-agent-events.ts";
import { restoreRunState, serializeRunState } from "../../../src/tripwires/run-state-changelog.ts";
import { exec, sandbox, toolCall } from "./events.ts";

/** Runs made of a small alphabet of actions and sandbox events, so loops, redundancy and alerts happen often. */
const COMMANDS = [
  "ls",
  "npm test",
  "rm -rf /",
  "cat .env",
  "curl https://x.example",
  "git push -f",
  "git status",
  "rm -rf node_modules",
];
const eventArbitrary = (runId: string, seq: number) =>
  fc.oneof(
    fc
      .record({ action: fc.integer({ min: 0, max: 3 }), digest: fc.integer({ min: 0, max: 1 }), failed: fc.boolean() })
      .map(({ action, digest, failed }): AgentEvent =>
        toolCall(runId, seq, "shell", JSON.stringify({ a: action }), {
          observation_digest: `d${digest}`,
          status: failed ? "error" : "ok",
        }),
      ),
    fc.constantFrom(...COMMANDS).map((command): AgentEvent => exec(runId, seq, command)),
    fc.constant(sandbox(runId, seq, "file_write", { path: "/work/repo/a" })),
    // Agent-only records: shell tool calls (analysed, paired with their exec mirror) and messages.
    fc
      .record({ command: fc.constantFrom(...COMMANDS, "grep -r x ."), failed: fc.boolean() })
      .map(({ command, failed }): AgentEvent =>
        toolCall(runId, seq, "Bash", JSON.stringify({ command }), {
          observation_digest: "same",
          status: failed ? "error" : "ok",
        }),
      ),
    fc.integer({ min: 0, max: 1 }).map((digest): AgentEvent =>
      toolCall(runId, seq, "x", "", {
        kind: "message",
        tool: undefined,
        input: undefined,
        actor: "assistant",
        observation_digest: `m${digest}`,
        status: undefined,
      }),
    ),
  );

const runArbitrary = fc
  .array(fc.constantFrom("run-a", "run-b"), { minLength: 1, maxLength: 80 })
  .chain((runIds) => fc.tuple(...runIds.map((runId, seq) => eventArbitrary(runId, seq))));

const bytes = (alerts: readonly TripwireAlert[]): string => canonicalJson(alerts);

describe("replay, dedupe and restore properties", { timeout: 60_000 }, () => {
  it("replaying the same records twice gives byte-identical alerts", () => {
    fc.assert(
      fc.property(runArbitrary, (events) => bytes(replayAgentEvents(events)) === bytes(replayAgentEvents(events))),
    );
  });

  it("duplicated records (at-least-once redelivery) add no alerts", () => {
    fc.assert(
      fc.property(runArbitrary, fc.array(fc.nat(), { maxLength: 20 }), (events, picks) => {
        const withDuplicates: AgentEvent[] = [];
        events.forEach((event, index) => {
          withDuplicates.push(event);
          if (picks.includes(index)) withDuplicates.push({ ...event });
        });
        for (const pick of picks) {
          const again = events[pick % events.length];
          if (again !== undefined) withDuplicates.push(again);
        }
        expect(bytes(replayAgentEvents(withDuplicates))).toBe(bytes(replayAgentEvents(events)));
      }),
    );
  });

  it("serialise and restore at any cut point gives the same alerts as uninterrupted processing", () => {
    fc.assert(
      fc.property(runArbitrary, fc.nat(), (events, cutSeed) => {
        const cut = cutSeed % (events.length + 1);
        const runs = inMemoryRunStates();
        const first = createRunMonitor({}, runs);
        const alerts: TripwireAlert[] = [];
        for (const event of events.slice(0, cut)) alerts.push(...first.process(event).alerts);
        // As the Kafka run monitor restores: every held run's changelog value, into a new store.
        const restoredRuns = inMemoryRunStates();
        for (const [runId, state] of runs.entries()) restoredRuns.put(runId, restoreRunState(serializeRunState(state)));
        const restored = createRunMonitor({}, restoredRuns);
        for (const event of events.slice(cut)) alerts.push(...restored.process(event).alerts);
        expect(bytes(alerts.sort(compareAlerts))).toBe(bytes(replayAgentEvents(events)));
      }),
    );
  });

  it("per-run changelog values restore to an identical monitor", () => {
    fc.assert(
      fc.property(runArbitrary, fc.nat(), (events, cutSeed) => {
        const cut = cutSeed % (events.length + 1);
        const runs = inMemoryRunStates();
        const original = createRunMonitor({}, runs);
        for (const event of events.slice(0, cut)) original.process(event);
        const changelog = new Map<string, string>();
        for (const [runId, state] of runs.entries()) changelog.set(runId, serializeRunState(state));
        const restoredRuns = inMemoryRunStates();
        for (const [runId, value] of changelog) restoredRuns.put(runId, restoreRunState(value));
        const restored = createRunMonitor({}, restoredRuns);
        for (const event of events.slice(cut))
          expect(bytes(restored.process(event).alerts)).toBe(bytes(original.process(event).alerts));
      }),
    );
  });

  it("the changelog value restores to exactly the state that was written, and writing it again gives the same text", () => {
    fc.assert(
      fc.property(runArbitrary, (events) => {
        const runs = inMemoryRunStates();
        const monitor = createRunMonitor({}, runs);
        for (const event of events) monitor.process(event);
        for (const runId of ["run-a", "run-b"]) {
          const state = runs.get(runId);
          if (state === undefined) continue;
          const value = serializeRunState(state);
          expect(restoreRunState(value)).toEqual(state);
          expect(serializeRunState(restoreRunState(value))).toBe(value);
          // The object form, as values written before the compact form were, restores to the same state.
          expect(restoreRunState(JSON.stringify(state))).toEqual(state);
        }
      }),
    );
  });

  it("alert ids are deterministic and unique within a replay", () => {
    fc.assert(
      fc.property(runArbitrary, (events) => {
        const ids = replayAgentEvents(events).map((alert) => alert.alert_id);
        expect(new Set(ids).size).toBe(ids.length);
        for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
      }),
    );
  });
});
