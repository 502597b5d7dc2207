import type { CliCommand } from "../command.ts";

/** A sub-command by name, its module loaded only when it runs (or for the top-level help). */
export interface CommandEntry {
  readonly name: string;
  load(): Promise<CliCommand>;
}

/**
 * Every sub-command of `agentops`, in the order `agentops --help` lists them. A new command is
 * one file under this folder and one line here. Modules load on demand: a long-lived
 * `agentops run --roles engine` does not hold the OTLP decoders, importers and shell parser of
 * the other commands.
 */
export const commands: readonly CommandEntry[] = [
  { name: "replay", load: async () => (await import("./replay.ts")).replayCommand },
  { name: "run", load: async () => (await import("./run.ts")).runCommand },
  { name: "produce", load: async () => (await import("./produce.ts")).produceCommand },
  { name: "otlp", load: async () => (await import("./otlp.ts")).otlpCommand },
  { name: "hook", load: async () => (await import("./hook.ts")).hookCommand },
  { name: "import", load: async () => (await import("./import.ts")).importCommand },
  { name: "results", load: async () => (await import("./results.ts")).resultsCommand },
  { name: "alerts", load: async () => (await import("./alerts.ts")).alertsCommand },
  { name: "explain", load: async () => (await import("./explain.ts")).explainCommand },
  { name: "serve", load: async () => (await import("./serve.ts")).serveCommand },
  { name: "export", load: async () => (await import("./export.ts")).exportCommand },
  { name: "notify", load: async () => (await import("./notify.ts")).notifyCommand },
  { name: "catalog", load: async () => (await import("./catalog.ts")).catalogCommand },
  { name: "generate", load: async () => (await import("./generate.ts")).generateCommand },
  { name: "topics", load: async () => (await import("./topics.ts")).topicsCommand },
];
