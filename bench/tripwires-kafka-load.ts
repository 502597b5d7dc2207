// Load generation and statistics for the Kafka tripwires benchmark (bench/tripwires.bench.ts):
// benign background agent events over many concurrent runs, destructive injections at a known
// run/seq, and nearest-rank percentiles. Pure: no Kafka, no clock.
import type { AgentEvent, SandboxEvent } from "../src/contract/facts.ts";
import { Rng } from "../src/workload/prng.ts";

/** Benign, realistic command lines (all read-only or workspace-local: none of them alerts). */
const BENIGN_COMMANDS = [
  "ls",
  "ls -la src",
  "cat package.json",
  "npm test",
  "npm run build",
  "git status",
  "git diff --stat",
  "git log --oneline -5",
  "grep -rn TODO src",
  "grep -rn 'export function' src/tripwires",
  "npx tsc -p tsconfig.json",
  "npx eslint src",
  "python -m pytest -q",
  "find . -name '*.ts' | head",
  "sed -n 1,40p src/index.ts",
  "rm -rf dist",
  "rm -rf node_modules/.cache",
  "mkdir -p build && cp src/a.ts build/",
  "git add -A && git commit -m wip",
  "make",
  "cargo build",
  "cat README.md | head -20",
  "wc -l src/*.ts",
  "node --version",
  "git checkout -b feature/x",
];

/** Destructive commands injected as probes; each raises at least one DESTRUCTIVE alert on its own record. */
export const DESTRUCTIVE_COMMANDS = [
  "rm -rf /",
  "git push --force origin main",
  "psql -c 'DROP TABLE users'",
  "sudo rm -rf ~",
  "terraform destroy -auto-approve",
  "bash -c 'rm -rf /etc'",
];

const WORKSPACE = "/work/repo";

interface Slot {
  runId: string;
  nextSeq: number;
  remaining: number;
}

/**
 * `concurrentRuns` runs are active at any time; events go to them round-robin, and a run that
 * has sent `eventsPerRun` events is replaced by a fresh run id (so the monitor sees many runs
 * start over the benchmark, not just `concurrentRuns`). Mix as in bench/tripwires-core.ts: 60%
 * `agent_step` tool calls over 12 actions per run (loops and re-reads occur, so loop and
 * redundancy alerts are part of the load), 40% sandbox events (exec of benign commands,
 * file_write, file_read, network, sql).
 */
export class AgentEventLoad {
  private readonly slots: Slot[];
  private readonly random: () => number;
  private readonly eventsPerRun: number;
  private readonly prefix: string;
  private cursor = 0;
  private runsStarted = 0;

  constructor(options: { concurrentRuns: number; eventsPerRun: number; seed: number; runPrefix: string }) {
    // The workload generator's seeded PRNG: every run sends the same mix.
    const rng = new Rng(options.seed);
    this.random = () => rng.next();
    this.eventsPerRun = options.eventsPerRun;
    this.prefix = options.runPrefix;
    this.slots = Array.from({ length: options.concurrentRuns }, () => this.freshSlot());
  }

  get runs(): number {
    return this.runsStarted;
  }

  private freshSlot(): Slot {
    const runId = `${this.prefix}-${this.runsStarted}`;
    this.runsStarted += 1;
    return { runId, nextSeq: 0, remaining: this.eventsPerRun };
  }

  private take(index: number): { runId: string; seq: number } {
    let slot = this.slots[index];
    if (slot === undefined || slot.remaining <= 0) {
      slot = this.freshSlot();
      this.slots[index] = slot;
    }
    slot.remaining -= 1;
    const seq = slot.nextSeq;
    slot.nextSeq += 1;
    return { runId: slot.runId, seq };
  }

  /** The next benign background event. */
  next(eventTime: number): AgentEvent {
    const index = this.cursor;
    this.cursor = (this.cursor + 1) % this.slots.length;
    const { runId, seq } = this.take(index);
    const common = {
      contract: "agentops.observation@1.0.0" as const,
      fact_id: `${runId}-${seq}`,
      event_time: eventTime,
      provenance: null,
      run_id: runId,
      seq,
    };
    const random = this.random;
    if (random() < 0.6) {
      const action = Math.floor(random() * 12);
      return {
        ...common,
        type: "agent_step",
        actor: undefined,
        kind: "tool_call",
        tool: action < 6 ? "read_file" : "shell",
        input: `{"arg":"value-${action}"}`,
        observation_digest: `sha256:${Math.floor(random() * 3)}`,
        status: random() < 0.1 ? "error" : "ok",
        input_tokens: undefined,
        output_tokens: undefined,
      };
    }
    const kindRoll = random();
    const kind =
      kindRoll < 0.7
        ? "exec"
        : kindRoll < 0.8
          ? "file_write"
          : kindRoll < 0.9
            ? "file_read"
            : kindRoll < 0.95
              ? "network"
              : "sql";
    const command =
      kind === "exec"
        ? BENIGN_COMMANDS[Math.floor(random() * BENIGN_COMMANDS.length)]
        : kind === "sql"
          ? random() < 0.5
            ? "SELECT * FROM t WHERE id = 1"
            : "UPDATE t SET a = 1 WHERE id = 2"
          : undefined;
    return {
      ...common,
      type: "sandbox_event",
      kind,
      command,
      argv: undefined,
      path: kind === "file_write" || kind === "file_read" ? `${WORKSPACE}/src/a.ts` : undefined,
      cwd: WORKSPACE,
      workspace_root: WORKSPACE,
      target: kind === "network" ? "registry.npmjs.org" : undefined,
      exit_code: undefined,
    };
  }

  /** A destructive exec at the next seq of one of the active runs (a unique run_id + seq). */
  destructive(eventTime: number, probe: number): SandboxEvent {
    const { runId, seq } = this.take(Math.floor(this.random() * this.slots.length));
    const command = DESTRUCTIVE_COMMANDS[probe % DESTRUCTIVE_COMMANDS.length] ?? "rm -rf /";
    return {
      contract: "agentops.observation@1.0.0",
      type: "sandbox_event",
      fact_id: `${runId}-${seq}`,
      event_time: eventTime,
      provenance: null,
      run_id: runId,
      seq,
      kind: "exec",
      command,
      argv: undefined,
      path: undefined,
      cwd: WORKSPACE,
      workspace_root: WORKSPACE,
      target: undefined,
      exit_code: undefined,
    };
  }
}

/** Nearest-rank percentile of an ascending array (p in 0..100). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] ?? Number.NaN;
}

export interface Distribution {
  readonly count: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

export function distribution(values: readonly number[]): Distribution {
  const sorted = [...values].sort((left, right) => left - right);
  const mean = sorted.length === 0 ? Number.NaN : sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
    mean,
  };
}
