import { execFile } from "node:child_process";
import { join } from "node:path";
import type { MetricResult } from "../../src/contract/result-record.ts";
import { REPO_ROOT, keyOf } from "./processes.ts";

/**
 * The downstream consumer examples under examples/consumers/ (docs/consumers.md), run as a user
 * would: build the Java one with Maven, run each against the real broker and registry, and read
 * the table it prints. Missing tools fail with the command that installs them, never a skip.
 */

export const JAVA_EXAMPLE_DIR = join(REPO_ROOT, "examples/consumers/java");
export const PYTHON_EXAMPLE = join(REPO_ROOT, "examples/consumers/python/results_table.py");
/** Debian's interpreter, which sees the python3-confluent-kafka and python3-avro packages (a pyenv or venv python does not). */
export const EXAMPLES_PYTHON = process.env["AGENTOPS_EXAMPLES_PYTHON"] ?? "/usr/bin/python3";

export interface Run {
  readonly code: number | string;
  readonly stdout: string;
  readonly stderr: string;
  readonly seconds: number;
}

export function run(
  command: string,
  args: readonly string[],
  options: { cwd?: string; timeoutMs: number; env?: NodeJS.ProcessEnv },
): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd ?? REPO_ROOT,
        timeout: options.timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
        env: options.env ?? process.env,
      },
      (error, stdout, stderr) => {
        const code =
          error === null
            ? 0
            : typeof error.code === "number"
              ? error.code
              : error.killed
                ? `killed after ${options.timeoutMs} ms`
                : String(error.code ?? error.message);
        resolve({ code, stdout, stderr, seconds: (Date.now() - started) / 1000 });
      },
    );
  });
}

function failure(what: string, result: Run): Error {
  return new Error(
    `${what} exited ${String(result.code)} after ${result.seconds.toFixed(1)} s\n--- stdout\n${result.stdout.slice(-4000)}\n--- stderr\n${result.stderr.slice(-4000)}`,
  );
}

/** Fails naming the package to install when `java` or `mvn` cannot run. */
export async function requireJavaAndMaven(): Promise<void> {
  const java = await run("java", ["-version"], { timeoutMs: 60_000 });
  if (java.code !== 0)
    throw new Error(
      `the Java consumer example needs a JDK 17+ as \`java\` on PATH (java -version: ${String(java.code)} ${java.stderr.trim()}); install one, e.g. apt-get install -y openjdk-17-jdk-headless`,
    );
  const maven = await run("mvn", ["-B", "-v"], { timeoutMs: 60_000 });
  if (maven.code !== 0)
    throw new Error(
      `the Java consumer example needs Maven as \`mvn\` on PATH (mvn -v: ${String(maven.code)} ${maven.stderr.trim()}); install it, e.g. apt-get install -y maven`,
    );
}

/** Fails naming the Debian packages when the interpreter cannot import the example's libraries. */
export async function requirePythonPackages(): Promise<void> {
  const probe = await run(EXAMPLES_PYTHON, ["-c", "import confluent_kafka, avro.io, avro.schema"], {
    timeoutMs: 60_000,
  });
  if (probe.code !== 0) {
    throw new Error(
      `the Python consumer example needs ${EXAMPLES_PYTHON} with confluent_kafka and avro (${String(probe.code)}: ${probe.stderr.trim().split("\n").at(-1) ?? ""}); install them with apt-get install -y python3-confluent-kafka python3-avro (bash .ci/run does), or point AGENTOPS_EXAMPLES_PYTHON at an interpreter that has them`,
    );
  }
}

export interface MavenBuild {
  readonly offline: boolean;
  readonly seconds: number;
}

/**
 * `mvn package` of the Java example. Offline first: once ~/.m2 holds every pinned plugin and
 * dependency, the build never touches the network. Only when that fails (first run, a cold
 * machine) does it go online to Maven Central, bounded by `onlineTimeoutMs`.
 */
export async function buildJavaExample(onlineTimeoutMs = 480_000): Promise<MavenBuild> {
  await requireJavaAndMaven();
  const args = ["-B", "-q", "package"];
  const offline = await run("mvn", ["-o", ...args], { cwd: JAVA_EXAMPLE_DIR, timeoutMs: 240_000 });
  if (offline.code === 0) return { offline: true, seconds: offline.seconds };
  process.stderr.write(
    `[consumer-examples] offline Maven build failed (first run?): building online (up to ${onlineTimeoutMs / 1000} s)\n`,
  );
  const online = await run("mvn", args, { cwd: JAVA_EXAMPLE_DIR, timeoutMs: onlineTimeoutMs });
  if (online.code !== 0) throw failure(`mvn package in ${JAVA_EXAMPLE_DIR}`, online);
  return { offline: false, seconds: offline.seconds + online.seconds };
}

export interface ExampleTarget {
  readonly brokers: string;
  /** The Confluent-compatible root the project uses (Apicurio: .../apis/ccompat/v7). */
  readonly registryUrl: string;
  readonly topic: string;
}

/** Apicurio's native API root beside its Confluent-compatible one: what the Apicurio serde needs. */
export function nativeRegistryUrl(confluentCompatibleUrl: string): string {
  const match = /^(.*)\/apis\/ccompat\/v\d+\/?$/.exec(confluentCompatibleUrl);
  if (match === null)
    throw new Error(
      `the Java example uses the Apicurio serde, which needs Apicurio's native API; ${confluentCompatibleUrl} is not an Apicurio .../apis/ccompat/vN address`,
    );
  return `${match[1] as string}/apis/registry/v3`;
}

export async function runJavaExample(target: ExampleTarget): Promise<Run> {
  const result = await run(
    "java",
    [
      "-jar",
      join(JAVA_EXAMPLE_DIR, "target/results-table.jar"),
      "--brokers",
      target.brokers,
      "--registry",
      nativeRegistryUrl(target.registryUrl),
      "--topic",
      target.topic,
    ],
    { timeoutMs: 180_000 },
  );
  if (result.code !== 0) throw failure("the Java consumer example", result);
  return result;
}

export async function runPythonExample(target: ExampleTarget): Promise<Run> {
  await requirePythonPackages();
  // Environment rather than flags, the other way the example takes its settings.
  const env = {
    ...process.env,
    KAFKA_BROKERS: target.brokers,
    SCHEMA_REGISTRY_URL: target.registryUrl,
    RESULTS_TOPIC: target.topic,
  };
  const result = await run(EXAMPLES_PYTHON, [PYTHON_EXAMPLE], { timeoutMs: 180_000, env });
  if (result.code !== 0) throw failure("the Python consumer example", result);
  return result;
}

/** One row of an example's table, cells parsed back from their JSON text. */
export interface TableRow {
  readonly metric_id: string;
  readonly scope: unknown;
  readonly cohort: unknown;
  readonly status: string;
  readonly value: unknown;
  readonly as_of: unknown;
}

export const TABLE_HEADER = "key\tmetric_id\tscope\tcohort\tstatus\tvalue\tas_of";

/** Parses an example's tab-separated table into rows by key; fails on a malformed line or a repeated key. */
export function parseTable(text: string): Map<string, TableRow> {
  const lines = text.split("\n").filter((line) => line !== "");
  if (lines[0] !== TABLE_HEADER)
    throw new Error(`table header is ${JSON.stringify(lines[0])}, expected ${JSON.stringify(TABLE_HEADER)}`);
  const rows = new Map<string, TableRow>();
  for (const line of lines.slice(1)) {
    const cells = line.split("\t");
    if (cells.length !== 7) throw new Error(`table line with ${cells.length} cells, expected 7: ${line}`);
    const [key, metricId, scope, cohort, status, value, asOf] = cells as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    if (rows.has(key)) throw new Error(`key printed twice: ${key}`);
    rows.set(key, {
      metric_id: metricId,
      scope: JSON.parse(scope),
      cohort: JSON.parse(cohort),
      status,
      value: JSON.parse(value),
      as_of: JSON.parse(asOf),
    });
  }
  return rows;
}

/** The rows a correct example prints for `agentops results --json` output. */
export function expectedRows(resultsJson: string): Map<string, TableRow> {
  const rows = new Map<string, TableRow>();
  for (const line of resultsJson.split("\n")) {
    if (line === "") continue;
    const result = JSON.parse(line) as MetricResult;
    rows.set(keyOf(result), {
      metric_id: result.metric_id,
      scope: result.scope,
      cohort: result.cohort,
      status: result.status,
      value: result.value,
      as_of: result.as_of,
    });
  }
  return rows;
}
