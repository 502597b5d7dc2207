import { closeSync, mkdirSync, openSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { once } from "node:events";
import { IMPORTERS, importLogs, isImportFormat, logFiles } from "../../ingest/importers/import-logs.ts";
import { UsageError, type CliCommand } from "../command.ts";
import { parseFlags, stringFlag } from "../flags.ts";
import { progressReporter } from "../progress.ts";
import { formatTable } from "../text-table.ts";

const FORMATS = Object.values(IMPORTERS)
  .map((importer) => `  ${importer.format.padEnd(15)} ${importer.description}`)
  .join("\n");

const USAGE = `Usage: agentops import <format> <path…> [--out facts.ndjson] [--role ROLE] [--runtime RUNTIME]
                       [--base-time 2025-01-01T00:00:00Z]

Converts agent transcripts and trajectories into observation facts (NDJSON, one fact a line)
for \`agentops produce\` or \`agentops replay\`: an agent_step for every tool call and message,
a sandbox_event for shell and file actions, a model_call where the log has token usage.
Importing the same log twice writes the same facts (deterministic fact_ids: a redelivery).
A path may be a file or a directory (walked for the format's file names). See docs/importers.md.

Formats:
${FORMATS}

  --out        where to write the facts (default: standard output)
  --role       C30 role id to put on model calls (absent when not given: never guessed)
  --runtime    C06 runtime id for model calls (default: the format name)
  --base-time  base of derived event times for logs without per-step times (default: each
               file's modification time); an RFC 3339 timestamp`;

export const importCommand: CliCommand = {
  name: "import",
  summary: "convert Claude Code, Codex, SWE-agent, mini-swe-agent or OpenHands logs into facts",
  usage: USAGE,
  async run(argv) {
    const flags = parseFlags(
      argv,
      {
        out: { type: "string" },
        role: { type: "string" },
        runtime: { type: "string" },
        "base-time": { type: "string" },
      },
      "import",
    );
    const [format, ...paths] = flags.positionals;
    if (format === undefined || !isImportFormat(format)) {
      throw new UsageError(
        "<format>",
        format === undefined ? "no format was named" : `"${format}" is not a known format`,
        `name one of ${Object.keys(IMPORTERS).join(", ")}, e.g. agentops import claude-code ~/.claude/projects`,
      );
    }
    if (paths.length === 0)
      throw new UsageError(
        "<path…>",
        "no log file or directory was named",
        `name at least one, e.g. agentops import ${format} path/to/logs`,
      );
    for (const path of paths) {
      try {
        statSync(path);
      } catch {
        throw new UsageError("<path…>", `cannot read ${path}`, "check the path");
      }
    }
    const baseTimeText = stringFlag(flags, "base-time");
    const baseTimeMs = baseTimeText === undefined ? undefined : Date.parse(baseTimeText);
    if (baseTimeMs !== undefined && (Number.isNaN(baseTimeMs) || !/(Z|[+-]\d{2}:\d{2})$/.test(baseTimeText ?? ""))) {
      throw new UsageError(
        "--base-time",
        `"${baseTimeText}" is not an RFC 3339 timestamp with a zone`,
        "give e.g. --base-time 2025-01-01T00:00:00Z",
      );
    }
    const files = logFiles(paths, IMPORTERS[format]);
    const totalBytes = files.reduce((sum, file) => sum + statSync(file).size, 0);
    const outPath = stringFlag(flags, "out");
    if (outPath !== undefined) mkdirSync(dirname(outPath), { recursive: true });
    // Facts are written file by file (a file's facts are held, never the whole import).
    const fd = outPath === undefined ? undefined : openSync(outPath, "w");
    const progress = progressReporter(`import ${format}`, totalBytes);
    let chunk: string[] = [];
    let stdoutText = "";
    let summary;
    try {
      summary = importLogs(
        format,
        files,
        { role: stringFlag(flags, "role"), runtime: stringFlag(flags, "runtime"), baseTimeMs },
        (fact) => chunk.push(`${JSON.stringify(fact)}\n`),
        (_done, bytes) => {
          progress.update(bytes);
          if (fd === undefined) stdoutText += chunk.join("");
          else writeSync(fd, chunk.join(""));
          chunk = [];
        },
      );
    } finally {
      progress.done();
      if (fd !== undefined) closeSync(fd);
    }
    if (fd === undefined && !process.stdout.write(stdoutText)) await once(process.stdout, "drain");
    const rows = [
      ["files", String(summary.files)],
      ["runs", String(summary.runs)],
      ["steps (agent_step)", String(summary.steps)],
      ["facts written", String(summary.facts)],
      ...Object.entries(summary.factsByType)
        .sort()
        .map(([type, count]) => [`  ${type}`, String(count)]),
      ...Object.entries(summary.unmapped).map(([reason, count]) => [`not mapped: ${reason}`, String(count)]),
    ];
    process.stderr.write(
      `${formatTable(["import", "count"], rows)}\n${outPath === undefined ? "" : `facts → ${outPath}\n`}`,
    );
    return summary.runs === 0 ? 1 : 0;
  },
};
