import { orderedProducer } from "../../kafka/client.ts";
import { readFileSync } from "node:fs";
import pino from "pino";
import { fileSink, kafkaSink, type FactSink } from "../../ingest/fact-sink.ts";
import { hostList } from "../../net/allowed-hosts.ts";
import { attributesFor, TUPLE_COORDINATES } from "../../ingest/otlp/attribution-gaps.ts";
import { DEFAULT_OTLP_MAPPING, type OtlpMappingConfig } from "../../ingest/otlp/mapping-config.ts";
import { startOtlpReceiver } from "../../ingest/otlp/otlp-receiver.ts";
import { Telemetry } from "../../stream/runtime/telemetry.ts";
import { CLUSTER_FLAGS, connectCluster } from "../cluster-flags.ts";
import { UsageError, type CliCommand } from "../command.ts";
import { integerFlag, parseFlags, stringFlag } from "../flags.ts";

const USAGE = `Usage: agentops otlp [--host 127.0.0.1] [--port 4318] [--out facts.ndjson [--dlq dead-letters.ndjson]]
                     [--mapping mapping.json] [--auth-token-file token.txt] [--allowed-hosts NAME,...]
                     [--brokers host:port] [--schema-registry URL] [--topic-prefix P]

An OTLP/HTTP receiver (POST /v1/traces, /v1/logs, /v1/metrics; protobuf or JSON, gzip or not;
GET /metrics: its own counters, Prometheus text).
OTel GenAI spans and Claude Code's own events become observation facts (docs/ingest.md has the
mapping table), published like \`agentops produce\` does; records that cannot be mapped are
counted in the OTLP partial-success answer and sent to the dead-letter topic.

  --out FILE      write facts as NDJSON instead of publishing (no broker needed)
  --dlq FILE      with --out: where dead letters go (default: reported only)
  --mapping FILE  JSON object whose fields replace those of the default mapping (docs/ingest.md)
  --auth-token-file FILE
                  require "Authorization: Bearer <the file's token>" on every request (401 otherwise);
                  exporters send it with OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer%20<token>".
                  Set it whenever --host is not a loopback address (docs/security.md)
  --allowed-hosts NAME,...
                  without a token, host names exporters may use besides the bound address (a request
                  naming another host gets 421: a web page rebound to this address cannot write facts)

Point Claude Code at it:
  CLAUDE_CODE_ENABLE_TELEMETRY=1 OTEL_LOGS_EXPORTER=otlp OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf \\
  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 \\
  OTEL_RESOURCE_ATTRIBUTES=agentops.provider=anthropic,agentops.role=implementer claude
An app with OTel GenAI spans: the same endpoint, and its role and runtime (the conventions carry neither):
  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 \\
  OTEL_RESOURCE_ATTRIBUTES=agentops.role=writer,agentops.runtime=openai-agents@0.4
Calls without provider, model, role or runtime are left out of the operational metrics; GET /metrics
and the summary at exit count them by the attribute to set.
Stop with Ctrl-C; it prints what it received.`;

export const otlpCommand: CliCommand = {
  name: "otlp",
  summary: "OTLP/HTTP receiver: agent telemetry (GenAI spans, Claude Code events) in as facts",
  usage: USAGE,
  async run(argv) {
    const flags = parseFlags(
      argv,
      {
        host: { type: "string" },
        port: { type: "string" },
        out: { type: "string" },
        dlq: { type: "string" },
        mapping: { type: "string" },
        "auth-token-file": { type: "string" },
        "allowed-hosts": { type: "string" },
        ...CLUSTER_FLAGS,
      },
      "otlp",
    );
    const host = stringFlag(flags, "host") ?? "127.0.0.1";
    const port = integerFlag(flags, "port", 4318, 0, 65_535);
    const out = stringFlag(flags, "out");
    const dlq = stringFlag(flags, "dlq");
    if (dlq !== undefined && out === undefined)
      throw new UsageError(
        "--dlq",
        "only applies with --out",
        "add --out facts.ndjson, or drop --dlq to use the dead-letter topic",
      );
    const config = mappingConfig(stringFlag(flags, "mapping"));
    const authToken = tokenFromFile(stringFlag(flags, "auth-token-file"));
    const allowedHosts = hostList(stringFlag(flags, "allowed-hosts"));
    const logger = pino({ name: "agentops-otlp" });
    const telemetry = new Telemetry();
    let sink: FactSink;
    if (out !== undefined) {
      sink = fileSink(out, dlq);
    } else {
      const { kafka, serde, topics } = await connectCluster(flags, "agentops-otlp");
      await serde.registerAll();
      const producer = orderedProducer(kafka);
      await producer.connect();
      sink = kafkaSink(producer, serde, topics, telemetry);
    }
    const receiver = await startOtlpReceiver({ host, port, sink, config, logger, authToken, allowedHosts, telemetry });
    logger.info({ url: receiver.url, out: out ?? null }, "otlp receiver listening");
    await new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    await receiver.close();
    await sink.close();
    const { requests, records, facts, unmapped, ignored, malformed, refused, callsMissing } = receiver.totals;
    process.stdout.write(
      `received ${requests} requests, ${records} records: ${facts} facts, ${unmapped} unmappable (dead-lettered), ` +
        `${ignored} ignored, ${malformed} malformed requests\n`,
    );
    const gaps = TUPLE_COORDINATES.filter((coordinate) => callsMissing[coordinate] > 0);
    if (gaps.length > 0) {
      process.stdout.write(`model calls left out of the operational metrics for want of an attribution coordinate:\n`);
      for (const coordinate of gaps) {
        const attribute = attributesFor(coordinate, config);
        process.stdout.write(`  ${callsMissing[coordinate]} without ${coordinate}: set ${attribute}\n`);
      }
    }
    const { unauthorized, foreignHost, tooLarge, timedOut, busy } = refused;
    process.stdout.write(
      `refused ${unauthorized} unauthorized, ${foreignHost} for another host, ${tooLarge} too large, ` +
        `${timedOut} timed-out, ${busy} over the concurrent-request bound\n`,
    );
    return 0;
  },
};

const TOKEN_EXAMPLE = "e.g. `openssl rand -hex 32 > token.txt`";

/** The token is the file's content without surrounding whitespace; it must be one header-safe word. */
function tokenFromFile(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  let token: string;
  try {
    token = readFileSync(path, "utf8").trim();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UsageError("--auth-token-file", `cannot read ${path} (${reason})`, `give a token file, ${TOKEN_EXAMPLE}`);
  }
  if (!/^[\x21-\x7e]{16,4096}$/.test(token)) {
    const problem = `${path} does not hold one token of 16 to 4096 visible ASCII characters`;
    throw new UsageError("--auth-token-file", problem, TOKEN_EXAMPLE);
  }
  return token;
}

function mappingConfig(path: string | undefined): OtlpMappingConfig {
  if (path === undefined) return DEFAULT_OTLP_MAPPING;
  let overrides: unknown;
  try {
    overrides = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new UsageError(
      "--mapping",
      `cannot read ${path} as JSON (${error instanceof Error ? error.message : String(error)})`,
      "give a JSON object with fields of the default mapping, see docs/ingest.md",
    );
  }
  if (typeof overrides !== "object" || overrides === null || Array.isArray(overrides))
    throw new UsageError(
      "--mapping",
      "is not a JSON object",
      "give a JSON object with fields of the default mapping, see docs/ingest.md",
    );
  for (const key of Object.keys(overrides)) {
    if (!(key in DEFAULT_OTLP_MAPPING))
      throw new UsageError(
        "--mapping",
        `unknown field "${key}"`,
        `use only ${Object.keys(DEFAULT_OTLP_MAPPING).join(", ")}`,
      );
  }
  return { ...DEFAULT_OTLP_MAPPING, ...(overrides as Partial<OtlpMappingConfig>) };
}
