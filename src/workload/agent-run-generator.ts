import { ANOMALY_MIX } from "./anomaly-mix.ts";
import type { Rng } from "./prng.ts";
import { absent, fact, HOUR, type BatchSink } from "./records.ts";
import type { DeliveryPlan, TaskPlan } from "./task-plan.ts";
import {
  BENIGN_EXEC,
  BENIGN_GIT,
  BENIGN_SQL,
  DESTRUCTIVE_ACTIONS,
  NETWORK_TARGETS,
  SEARCH_TERMS,
  SOURCE_FILES,
} from "./vocabulary.ts";

type SandboxKind = "exec" | "file_read" | "file_write" | "file_delete" | "network" | "git" | "sql";

/** One tool call of the agent and what the sandbox saw it do. */
interface Action {
  readonly tool: string;
  readonly args: Readonly<Record<string, string>>;
  readonly digest: string;
  readonly failed: boolean;
  readonly sandbox: {
    readonly kind: SandboxKind;
    readonly command?: string;
    readonly path?: string;
    readonly target?: string;
  };
}

/** Canonical JSON of flat string arguments: keys sorted, no whitespace. */
function canonicalArgs(args: Readonly<Record<string, string>>): string {
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(args).sort()) sorted[key] = args[key] as string;
  return JSON.stringify(sorted);
}

function benignAction(rng: Rng, root: string): Action {
  const digest = `sha256:${rng.hex(16)}`;
  const failed = rng.chance(ANOMALY_MIX.toolError);
  const file = rng.pick(SOURCE_FILES);
  const choice = rng.weighted([
    ["read", 0.3],
    ["edit", 0.2],
    ["exec", 0.2],
    ["search", 0.1],
    ["git", 0.1],
    ["fetch", 0.04],
    ["sql", 0.04],
    ["delete", 0.02],
  ] as const);
  switch (choice) {
    case "read":
      return {
        tool: "read_file",
        args: { path: file },
        digest,
        failed,
        sandbox: { kind: "file_read", path: `${root}/${file}` },
      };
    case "edit":
      return {
        tool: "edit_file",
        args: { path: file, patch: `sha256:${rng.hex(12)}` },
        digest,
        failed,
        sandbox: { kind: "file_write", path: `${root}/${file}` },
      };
    case "exec": {
      const command = rng.pick(BENIGN_EXEC);
      return { tool: "run_command", args: { command }, digest, failed, sandbox: { kind: "exec", command } };
    }
    case "search": {
      const command = `rg -n ${rng.pick(SEARCH_TERMS)} src`;
      return { tool: "search", args: { command }, digest, failed, sandbox: { kind: "exec", command } };
    }
    case "git": {
      const command = rng.pick(BENIGN_GIT);
      return { tool: "run_command", args: { command }, digest, failed, sandbox: { kind: "git", command } };
    }
    case "fetch": {
      const target = rng.pick(NETWORK_TARGETS);
      return { tool: "web_fetch", args: { url: target }, digest, failed, sandbox: { kind: "network", target } };
    }
    case "sql": {
      const command = rng.pick(BENIGN_SQL);
      return { tool: "query_db", args: { sql: command }, digest, failed, sandbox: { kind: "sql", command } };
    }
    case "delete":
      return {
        tool: "delete_file",
        args: { path: "tmp/scratch.log" },
        digest,
        failed,
        sandbox: { kind: "file_delete", path: `${root}/tmp/scratch.log` },
      };
  }
}

/** Tripwire material in one run. */
export interface RunAnomalies {
  /** Index into DESTRUCTIVE_ACTIONS, or -1. */
  readonly destructive: number;
}

/**
 * One monitored agent run (of one Delivery): a plan, a few tool calls each with the sandbox event it caused,
 * and a closing message. Some runs loop (a cycle of 2–3 identical tool calls repeated 4 times),
 * some repeat a step redundantly, and a few run a destructive command among benign ones.
 * Returns the number of events written.
 */
export function emitAgentRun(
  sink: BatchSink,
  rng: Rng,
  task: TaskPlan,
  delivery: DeliveryPlan,
  anomalies: RunAnomalies,
): number {
  const root = `/work/repos/${task.repository}`;
  const actions: Action[] = [];
  for (let n = rng.int(2, 3); n > 0; n -= 1) actions.push(benignAction(rng, root));
  if (rng.chance(ANOMALY_MIX.redundantStep)) {
    const read = benignAction(rng, root);
    actions.splice(rng.int(0, actions.length), 0, read, read);
  }
  if (rng.chance(ANOMALY_MIX.loop)) {
    const cycle: Action[] = [];
    for (let n = rng.int(2, 3); n > 0; n -= 1) cycle.push(benignAction(rng, root));
    for (let repeat = 0; repeat < 4; repeat += 1) actions.push(...cycle);
  }
  const destructive = DESTRUCTIVE_ACTIONS[anomalies.destructive];
  if (destructive !== undefined) {
    const tool = destructive.kind === "sql" ? "query_db" : "run_command";
    const args: Record<string, string> =
      destructive.kind === "sql" ? { sql: destructive.command } : { command: destructive.command };
    actions.splice(rng.int(1, actions.length), 0, {
      tool,
      args,
      digest: `sha256:${rng.hex(16)}`,
      failed: false,
      sandbox: { kind: destructive.kind, command: destructive.command },
    });
  }

  const span = Math.max(60_000, Math.min(delivery.end - delivery.start, 6 * HOUR));
  const steps = actions.length * 2 + 2;
  let seq = 0;
  const timeOf = (position: number): number => delivery.start + Math.floor(((position + 0.5) / steps) * span);
  const provenance = { basis: "DIRECT_HOST", source: "agent-host" };
  const step = (time: number, fields: Readonly<Record<string, unknown>>): void => {
    sink.emit(
      time,
      fact("agent_step", `st-${delivery.tag}-${seq}`, time, provenance, {
        run_id: delivery.runId,
        seq,
        actor: "writer",
        ...fields,
      }),
    );
    seq += 1;
  };

  step(timeOf(0), { kind: "plan", input_tokens: rng.int(800, 4000), output_tokens: rng.int(100, 600) });
  actions.forEach((action, position) => {
    const time = timeOf(1 + position * 2);
    step(time, {
      kind: "tool_call",
      tool: action.tool,
      input: canonicalArgs(action.args),
      observation_digest: action.digest,
      status: action.failed ? "error" : "ok",
    });
    const sandboxTime = time + 200;
    const { kind, command, path, target } = action.sandbox;
    const usesShell = kind === "exec" || kind === "git";
    sink.emit(
      sandboxTime,
      fact("sandbox_event", `sb-${delivery.tag}-${seq}`, sandboxTime, provenance, {
        run_id: delivery.runId,
        seq,
        kind,
        command,
        argv: usesShell && command !== undefined && !command.includes('"') ? command.split(" ") : undefined,
        path,
        cwd: kind === "network" ? absent(rng) : root,
        workspace_root: root,
        target,
        exit_code: usesShell ? (action.failed ? 1 : 0) : undefined,
      }),
    );
    seq += 1;
  });
  step(timeOf(steps - 1), { kind: "message", input_tokens: rng.int(500, 3000), output_tokens: rng.int(50, 400) });
  return seq;
}
