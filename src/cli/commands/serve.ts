import { statSync } from "node:fs";
import { startFileSource } from "../../serve/file-source.ts";
import { startKafkaSource } from "../../serve/kafka-source.ts";
import { hostList } from "../../net/allowed-hosts.ts";
import { isLoopbackHost } from "../../net/listen-address.ts";
import { startViewServer, type ViewServerOptions } from "../../serve/server.ts";
import { memberExplainer } from "../../explain/member-client.ts";
import { ViewState } from "../../serve/view-state.ts";
import { CLUSTER_FLAGS, withCluster } from "../cluster-flags.ts";
import { UsageError, type CliCommand } from "../command.ts";
import { booleanFlag, integerFlag, parseFlags, stringFlag } from "../flags.ts";

const USAGE = `Usage: agentops serve --results <results.ndjson> [--alerts <alerts.ndjson>] [--runs <runs.ndjson>]
                      [--host 127.0.0.1] [--port 8080] [--allowed-hosts NAME,...] [--explain-member URL]
       agentops serve --from-topics [--brokers host:port] [--schema-registry URL] [--topic-prefix P]
                      [--host 127.0.0.1] [--port 8080] [--allowed-hosts NAME,...] [--explain-member URL]

A live web view of the metrics and the tripwire alerts: every result by metric, scope and cohort
(the value or why there is none, coverage with its numerator/denominator, state and LOW_COVERAGE),
trends of window metrics per cohort, and tripwire alerts per run with the run state. The page
updates itself (server-sent events) as records arrive; it shows the records as published and
computes nothing.

  --results      an embedded replay's results file (agentops replay --output); re-read when it changes
  --alerts       its alerts file (--alerts); followed as alerts are appended
  --runs         its run-state file (--runs)
  --from-topics  follow the results, alerts and run-state topics of a Kafka cluster instead
  --host         address to listen on (default 127.0.0.1: this machine only)
  --port         port to listen on, 0 = any free port (default 8080)
  --allowed-hosts  host names the page may be reached by besides the bound address (comma-separated),
                 e.g. the machine's DNS name; any other Host header is refused (421). The view has no
                 login: bind beyond loopback only on a network you trust (docs/security.md)
  --explain-member  a running member's address (agentops run --metrics-port): clicking a figure opens
                 its lineage (agentops explain), asked of that member, which redirects to the engine's

On the bundled sample: npm run view`;

function existingFile(flag: string, path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  try {
    if (statSync(path).isFile()) return path;
  } catch {
    // named below
  }
  throw new UsageError(
    `--${flag}`,
    `cannot read ${path}`,
    "write it first with `agentops replay --input samples/facts.ndjson --output out/results.ndjson --alerts " +
      "out/alerts.ndjson --runs out/runs.ndjson`, or run `npm run view`",
  );
}

/** `--explain-member`: a figure's lineage is asked of that member (agentops explain --member). */
function explainOption(member: string | undefined): Pick<ViewServerOptions, "explain"> {
  if (member === undefined) return {};
  if (!URL.canParse(member))
    throw new UsageError(
      "--explain-member",
      `"${member}" is not a URL`,
      "give a running member's address, e.g. --explain-member http://127.0.0.1:9464",
    );
  return { explain: memberExplainer(member) };
}

export const serveCommand: CliCommand = {
  name: "serve",
  summary: "a live web view of results and tripwire alerts (files or Kafka topics)",
  usage: USAGE,
  async run(argv) {
    const flags = parseFlags(
      argv,
      {
        results: { type: "string" },
        alerts: { type: "string" },
        runs: { type: "string" },
        "from-topics": { type: "boolean" },
        host: { type: "string" },
        port: { type: "string" },
        "allowed-hosts": { type: "string" },
        "explain-member": { type: "string" },
        ...CLUSTER_FLAGS,
      },
      "serve",
    );
    const host = stringFlag(flags, "host") ?? "127.0.0.1";
    const allowedHosts = hostList(stringFlag(flags, "allowed-hosts"));
    const port = integerFlag(flags, "port", 8080, 0, 65_535);
    const fromTopics = booleanFlag(flags, "from-topics");
    if (
      fromTopics &&
      (stringFlag(flags, "results") ?? stringFlag(flags, "alerts") ?? stringFlag(flags, "runs")) !== undefined
    ) {
      throw new UsageError(
        "--from-topics",
        "cannot be combined with --results/--alerts/--runs",
        "serve either the replay's files or the Kafka topics",
      );
    }
    let stopSource: () => Promise<void> | void;
    let state: ViewState;
    if (fromTopics) {
      // A broker or registry that cannot be used ends `serve` at start with the same message as the other commands.
      const started = await withCluster(flags, "agentops-serve", async ({ kafka, serde, topics }) => {
        const view = new ViewState({
          mode: "kafka",
          description: `live from ${topics.results}, ${topics.alerts}, ${topics.runState}`,
          error: null,
        });
        return { view, source: await startKafkaSource(kafka, serde, topics, view) };
      });
      state = started.view;
      stopSource = () => started.source.stop();
    } else {
      const results = existingFile("results", stringFlag(flags, "results"));
      if (results === undefined)
        throw new UsageError(
          "--results",
          "no source was named",
          "give --results out/results.ndjson (an embedded replay's output) or --from-topics; `npm run view` serves the bundled sample",
        );
      const alerts = stringFlag(flags, "alerts");
      const runs = stringFlag(flags, "runs");
      state = new ViewState({
        mode: "files",
        description: `from ${[results, alerts, runs].filter((path) => path !== undefined).join(", ")}`,
        error: null,
      });
      const source = startFileSource({ results, alerts, runs }, state);
      stopSource = () => source.stop();
    }
    let server;
    try {
      server = await startViewServer(state, host, port, {
        allowedHosts,
        ...explainOption(stringFlag(flags, "explain-member")),
      });
    } catch (error) {
      await stopSource();
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EADDRINUSE")
        throw new UsageError(
          "--port",
          `${host}:${port} is already in use`,
          "choose another port, e.g. --port 8081, or --port 0 for any free port",
        );
      if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND")
        throw new UsageError(
          "--host",
          `cannot listen on ${host}`,
          "give an address of this machine, e.g. --host 127.0.0.1",
        );
      throw error;
    }
    process.stdout.write(`agentops view on ${server.url} (${state.snapshot().status.description}); Ctrl-C stops it\n`);
    if (!isLoopbackHost(host)) {
      const reach = `anyone who reaches port ${new URL(server.url).port} reads every result and alert`;
      process.stderr.write(`warning: the view has no login and ${host} is reachable beyond this machine: ${reach}\n`);
    }
    await new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    await server.close();
    await stopSource();
    return 0;
  },
};
