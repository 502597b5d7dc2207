// In-process throughput and per-run memory of the run monitor core (no Kafka).
// Run: npm run bench:tripwires:core   (node --expose-gc bench/tripwires-core.ts)
import type { AgentEvent } from "../src/contract/facts.ts";
import { createCommandAnalyser } from "../src/tripwires/commands/command-analyser.ts";
import { createRunMonitor } from "../src/tripwires/monitor.ts";
import { Rng } from "../src/workload/prng.ts";

const BASE_TIME = 1_767_225_600_000;
const COMMAND_TEMPLATES = [
  "npm test",
  "npm run build",
  "ls -la src",
  "git status",
  "git diff --stat",
  "cat package.json",
  "rm -rf node_modules",
  "rm -rf dist",
  "grep -rn TODO src",
  "git add -A && git commit -m wip",
  "npx tsc -p tsconfig.json",
  "python -m pytest -q",
  "git push origin feature/x",
  "find . -name '*.ts' | head",
  "sed -i 's/a/b/' src/file.ts",
  "curl -s https://registry.npmjs.org/zod",
  "cat .env.example",
  "docker compose up -d",
  "make",
  "cargo build",
];
const DANGEROUS = [
  "rm -rf /",
  "git push --force origin main",
  "psql -c 'DROP TABLE users'",
  "sudo rm -rf ~",
  "terraform destroy -auto-approve",
];

/** A realistic mix: 60% tool calls over a small per-run action set (loops and re-reads happen), 40% sandbox events. */
function generate(
  runs: number,
  eventsPerRun: number,
  distinctCommands: number,
  seed: number,
  firstSeq = 0,
): AgentEvent[] {
  // The workload generator's seeded PRNG: every run of the benchmark processes the same mix.
  const rng = new Rng(seed);
  const random = (): number => rng.next();
  const events: AgentEvent[] = [];
  const commands = Array.from({ length: distinctCommands }, (_, index) =>
    index < COMMAND_TEMPLATES.length
      ? (COMMAND_TEMPLATES[index] ?? "ls")
      : `${COMMAND_TEMPLATES[index % COMMAND_TEMPLATES.length] ?? "ls"} # variant ${index}`,
  );
  for (let seq = firstSeq; seq < firstSeq + eventsPerRun; seq++) {
    for (let run = 0; run < runs; run++) {
      const runId = `run-${run}`;
      const common = {
        contract: "agentops.observation@1.0.0" as const,
        fact_id: `${runId}-${seq}`,
        event_time: BASE_TIME + seq * 500 + run,
        provenance: null,
        run_id: runId,
        seq,
      };
      const roll = random();
      if (roll < 0.6) {
        const action = Math.floor(random() * 12);
        events.push({
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
        });
      } else {
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
            ? random() < 0.002
              ? DANGEROUS[Math.floor(random() * DANGEROUS.length)]
              : commands[Math.floor(random() * commands.length)]
            : kind === "sql"
              ? random() < 0.5
                ? "SELECT * FROM t WHERE id = 1"
                : "UPDATE t SET a = 1 WHERE id = 2"
              : undefined;
        events.push({
          ...common,
          type: "sandbox_event",
          kind,
          command,
          argv: undefined,
          path: kind === "file_write" || kind === "file_read" ? "/work/repo/src/a.ts" : undefined,
          cwd: "/work/repo",
          workspace_root: "/work/repo",
          target: kind === "network" ? "registry.npmjs.org" : undefined,
          exit_code: undefined,
        });
      }
    }
  }
  return events;
}

/** Median of `repetitions` timed passes, each over a fresh monitor (state empty) sharing one analyser. */
function throughput(label: string, events: readonly AgentEvent[], warmup: boolean, repetitions: number): number {
  // The warm-up pass shares the measured monitors' analyser: JIT and the command cache are warm,
  // run state is not.
  const analyser = createCommandAnalyser({ protectedBranches: ["main"], cacheSize: warmup ? 8192 : 0 });
  if (warmup) {
    const warmupMonitor = createRunMonitor({}, undefined, analyser);
    for (const event of events.slice(0, Math.min(events.length, 100_000))) warmupMonitor.process(event);
  }
  const rates: number[] = [];
  let alerts = 0;
  for (let repetition = 0; repetition < repetitions; repetition++) {
    const measured = createRunMonitor({}, undefined, analyser);
    alerts = 0;
    const started = performance.now();
    for (const event of events) alerts += measured.process(event).alerts.length;
    rates.push(events.length / ((performance.now() - started) / 1000));
  }
  rates.sort((left, right) => left - right);
  const median = rates[Math.floor(rates.length / 2)] ?? 0;
  const format = (rate: number): string => Math.round(rate).toLocaleString("en-US");
  console.log(
    `${label}: ${events.length} events x ${repetitions} passes: median ${format(median)} events/s (min ${format(rates[0] ?? 0)}, max ${format(rates.at(-1) ?? 0)}; ${alerts} alerts per pass)`,
  );
  return median;
}

function memoryPerRun(runs: number, eventsPerRun: number): number {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect === undefined) throw new Error("run with --expose-gc");
  const analyser = createCommandAnalyser({ protectedBranches: ["main"], cacheSize: 8192 });
  // Warm the shared command cache first so its bounded memory is not charged to the runs.
  const warmup = createRunMonitor({}, undefined, analyser);
  for (const event of generate(100, 50, 200, 7)) warmup.process(event);
  const monitor = createRunMonitor({ idleExpiryMinutes: 24 * 60 }, undefined, analyser);
  collect();
  const before = process.memoryUsage().heapUsed;
  // Events are generated in slices of 10 seqs and dropped, so only run state stays on the heap.
  for (let firstSeq = 0; firstSeq < eventsPerRun; firstSeq += 10) {
    for (const event of generate(runs, Math.min(10, eventsPerRun - firstSeq), 200, 7 + firstSeq, firstSeq))
      monitor.process(event);
  }
  collect();
  const after = process.memoryUsage().heapUsed;
  const perRun = (after - before) / monitor.activeRuns();
  console.log(
    `memory: ${monitor.activeRuns()} active runs x ${eventsPerRun} events each: heap delta ${((after - before) / 1048576).toFixed(1)} MiB = ${Math.round(perRun).toLocaleString("en-US")} bytes/run`,
  );
  return perRun;
}

const only = process.argv[2]; // "throughput" or "memory": run one part (e.g. under a profiler)
if (only !== "memory") {
  const mix = generate(1_000, 600, 200, 42);
  throughput("warm mix (1,000 runs, 200 distinct commands, command cache)", mix, true, 5);
  throughput("cold parsing (cache disabled, every exec/sql parsed)", mix.slice(0, 100_000), false, 1);
}
if (only !== "throughput") {
  memoryPerRun(10_000, 100);
  memoryPerRun(10_000, 1_000); // rings and dedupe windows full: the steady-state bound
}
