import type { AgentStep, SandboxEvent } from "../../../src/contract/facts.ts";

/** Builders for normalised agent events in tests. */
const BASE_TIME = 1_767_225_600_000; // 2026-01-01T00:00:00Z

export function toolCall(
  runId: string,
  seq: number,
  tool: string,
  input: string,
  extra: Partial<AgentStep> = {},
): AgentStep {
  return {
    contract: "agentops.observation@1.0.0",
    type: "agent_step",
    fact_id: `${runId}-step-${seq}`,
    event_time: BASE_TIME + seq * 1000,
    provenance: null,
    run_id: runId,
    seq,
    actor: undefined,
    kind: "tool_call",
    tool,
    input,
    observation_digest: undefined,
    status: "ok",
    input_tokens: undefined,
    output_tokens: undefined,
    ...extra,
  };
}

export function sandbox(
  runId: string,
  seq: number,
  kind: SandboxEvent["kind"],
  fields: Partial<SandboxEvent> = {},
): SandboxEvent {
  return {
    contract: "agentops.observation@1.0.0",
    type: "sandbox_event",
    fact_id: `${runId}-sandbox-${seq}`,
    event_time: BASE_TIME + seq * 1000,
    provenance: null,
    run_id: runId,
    seq,
    kind,
    command: undefined,
    argv: undefined,
    path: undefined,
    cwd: "/work/repo",
    workspace_root: "/work/repo",
    target: undefined,
    exit_code: undefined,
    ...fields,
  };
}

export const exec = (runId: string, seq: number, command: string, fields: Partial<SandboxEvent> = {}): SandboxEvent =>
  sandbox(runId, seq, "exec", { command, ...fields });
