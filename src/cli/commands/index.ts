import type { CliCommand } from "../command.ts";
import { catalogCommand } from "./catalog.ts";
import { generateCommand } from "./generate.ts";
import { hookCommand } from "./hook.ts";
import { otlpCommand } from "./otlp.ts";
import { importCommand } from "./import.ts";
import { alertsCommand } from "./alerts.ts";
import { produceCommand } from "./produce.ts";
import { replayCommand } from "./replay.ts";
import { resultsCommand } from "./results.ts";
import { runCommand } from "./run.ts";
import { serveCommand } from "./serve.ts";
import { topicsCommand } from "./topics.ts";

/**
 * Every sub-command of `agentops`, in the order `agentops --help` lists them. A new command is
 * one file under this folder and one line here.
 */
export const commands: readonly CliCommand[] = [
  replayCommand,
  runCommand,
  produceCommand,
  otlpCommand,
  hookCommand,
  importCommand,
  resultsCommand,
  alertsCommand,
  serveCommand,
  catalogCommand,
  generateCommand,
  topicsCommand,
];
