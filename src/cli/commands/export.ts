import { statSync } from "node:fs";
import { pino } from "pino";
import { DEFAULT_EXPORT_LIMITS } from "../../export/openmetrics.ts";
import { startExporterServer, type ExporterServer } from "../../export/exporter-server.ts";
import { startOtlpPush, type OtlpPush } from "../../export/otlp-push.ts";
import { startFileSource } from "../../serve/file-source.ts";
import { startKafkaSource } from "../../serve/kafka-source.ts";
import { ViewState } from "../../serve/view-state.ts";
import { CLUSTER_FLAGS, withCluster } from "../cluster-flags.ts";
import { UsageError, type CliCommand } from "../command.ts";
import { booleanFlag, integerFlag, parseFlags, stringFlag } from "../flags.ts";

const MAX_COHORTS_LIMIT = 10_000;
/** The longest one push may take: a collector that does not answer holds nothing longer. */
const OTLP_PUSH_TIMEOUT_MS = 10_000;

const USAGE = `Usage: agentops export --results <results.ndjson>
                       [--host 127.0.0.1] [--port 9464] [--max-cohorts 100] [--otlp-endpoint URL]
       agentops export --from-topics [--brokers host:port] [--schema-registry URL] [--topic-prefix P]
                       [--host 127.0.0.1] [--port 9464] [--max-cohorts 100] [--otlp-endpoint URL]

Serves the latest window (or snapshot cutoff) of every metric as OpenMetrics gauges on
GET /metrics, for Prometheus or any OpenMetrics scraper: value, rate numerator and denominator,
status (why there is no value), coverage numerator, denominator, ratio, state and LOW_COVERAGE.
Labels: metric, scope_kind, snapshot, the cohort coordinates (money keeps currency, source and
cost_basis) and category. Nothing is summed or converted; a result without a value has no value
series. GET /healthz says whether the source is readable.

  --results      an embedded replay's results file (agentops replay --output); re-read on change
  --from-topics  follow the compacted results topic of a Kafka cluster instead
  --host         address to listen on (default 127.0.0.1: this machine only)
  --port         port to listen on, 0 = any free port (default 9464)
  --max-cohorts  cohorts exported per metric, most eligible units first (1..${MAX_COHORTS_LIMIT}, default
                 ${DEFAULT_EXPORT_LIMITS.maxCohortsPerMetric}); the rest are counted in agentops_export_cohorts_folded
  --otlp-endpoint  also push the same series to an OTLP/HTTP collector (JSON, POST <URL>/v1/metrics),
                   e.g. http://127.0.0.1:4318; failures are logged on stderr
  --otlp-interval  seconds between pushes (1..3600, default 60)`;

const FLAGS = {
  results: { type: "string" },
  "from-topics": { type: "boolean" },
  host: { type: "string" },
  port: { type: "string" },
  "max-cohorts": { type: "string" },
  "otlp-endpoint": { type: "string" },
  "otlp-interval": { type: "string" },
  ...CLUSTER_FLAGS,
} as const;

function existingResultsFile(path: string | undefined): string {
  const fix =
    "give --results out/results.ndjson (written by `agentops replay --input samples/facts.ndjson" +
    " --output out/results.ndjson`) or --from-topics";
  if (path === undefined) throw new UsageError("--results", "no source was named", fix);
  try {
    if (statSync(path).isFile()) return path;
  } catch {
    // named below
  }
  throw new UsageError("--results", `cannot read ${path}`, fix);
}

function httpUrl(flag: string, text: string | undefined): URL | undefined {
  if (text === undefined) return undefined;
  const fix = `give the collector's OTLP/HTTP address, e.g. --${flag} http://127.0.0.1:4318`;
  if (!URL.canParse(text)) throw new UsageError(`--${flag}`, `"${text}" is not a URL`, fix);
  const url = new URL(text);
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`--${flag}`, `${url.protocol} is not http or https`, fix);
  }
  // Credentials in a flag end up in shell history and process lists; the push sends none.
  if (url.username !== "" || url.password !== "") {
    throw new UsageError(
      `--${flag}`,
      "carries credentials",
      "push to a local collector without credentials in the URL",
    );
  }
  return url;
}

export const exportCommand: CliCommand = {
  name: "export",
  summary: "serve the latest results as OpenMetrics gauges on /metrics (files or Kafka topics)",
  usage: USAGE,
  async run(argv) {
    const flags = parseFlags(argv, FLAGS, "export");
    const host = stringFlag(flags, "host") ?? "127.0.0.1";
    const port = integerFlag(flags, "port", 9464, 0, 65_535);
    const { maxCohortsPerMetric } = DEFAULT_EXPORT_LIMITS;
    const maxCohorts = integerFlag(flags, "max-cohorts", maxCohortsPerMetric, 1, MAX_COHORTS_LIMIT);
    const limits = { ...DEFAULT_EXPORT_LIMITS, maxCohortsPerMetric: maxCohorts };
    const otlpEndpoint = httpUrl("otlp-endpoint", stringFlag(flags, "otlp-endpoint"));
    const otlpIntervalMs = integerFlag(flags, "otlp-interval", 60, 1, 3_600) * 1000;
    const fromTopics = booleanFlag(flags, "from-topics");
    if (fromTopics && stringFlag(flags, "results") !== undefined) {
      const fix = "export either a replay's results file or the Kafka topics";
      throw new UsageError("--from-topics", "cannot be combined with --results", fix);
    }
    let state: ViewState;
    let stopSource: () => Promise<void> | void;
    if (fromTopics) {
      const started = await withCluster(flags, "agentops-export", async ({ kafka, serde, topics }) => {
        const view = new ViewState({ mode: "kafka", description: `live from ${topics.results}`, error: null });
        return { view, source: await startKafkaSource(kafka, serde, topics, view, "results") };
      });
      state = started.view;
      stopSource = () => started.source.stop();
    } else {
      const results = existingResultsFile(stringFlag(flags, "results"));
      state = new ViewState({ mode: "files", description: `from ${results}`, error: null });
      const source = startFileSource({ results }, state);
      stopSource = () => source.stop();
    }
    let server: ExporterServer;
    try {
      server = await startExporterServer(state, host, port, limits);
    } catch (error) {
      await stopSource();
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EADDRINUSE") {
        const fix = "choose another port, e.g. --port 9465, or --port 0 for any free port";
        throw new UsageError("--port", `${host}:${port} is already in use`, fix);
      }
      if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") {
        const fix = "give an address of this machine, e.g. --host 127.0.0.1";
        throw new UsageError("--host", `cannot listen on ${host}`, fix);
      }
      throw error;
    }
    const source = state.snapshot().status.description;
    process.stdout.write(`agentops export on ${server.url} (${source}); Ctrl-C stops it\n`);
    let push: OtlpPush | undefined;
    if (otlpEndpoint !== undefined) {
      const logger = pino({ name: "agentops-export" }, pino.destination(2));
      const timing = { intervalMs: otlpIntervalMs, timeoutMs: OTLP_PUSH_TIMEOUT_MS };
      push = startOtlpPush({ state, endpoint: otlpEndpoint, ...timing, limits, logger });
    }
    await new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    push?.stop();
    await server.close();
    await stopSource();
    return 0;
  },
};
