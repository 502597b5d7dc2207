import { parentPort } from "node:worker_threads";
import { createCommandAnalyser } from "../../tripwires/commands/command-analyser.ts";
import type { DestructiveFinding } from "../../tripwires/commands/command-analysis.ts";
import { fileWriteFindings } from "../../tripwires/commands/sandbox-event-analysis.ts";
import { AnalysisDeadlineError, withinDeadline } from "../../tripwires/commands/analysis-deadline.ts";
import { parseTripwireConfig } from "../../tripwires/config.ts";
import { destructiveRule } from "../../tripwires/rules/destructive-rules.ts";
import { ALLOW, undecided, verdictOf, type HookVerdict } from "./claude-code-hook.ts";
import type { AnalysisReply, AnalysisRequest } from "./analysis-pool.ts";

/**
 * One analysis worker of the hook: loads the shell grammar (WASM) and the rules once, then judges
 * one request at a time. A failure inside the analyser (the WASM parser aborting, the stack running
 * out) leaves this instance suspect: the reply asks the pool to replace the worker.
 */
const port = parentPort;
if (port === null) throw new Error("analysis-worker.ts runs as a worker thread");
const { protectedBranches } = parseTripwireConfig().destructive;
let failed = false;
const WARM_UP = [
  "rm -rf /tmp/x && git push --force origin main",
  "cat a | grep b > c; echo $(date) | xargs rm -f",
  "bash -c 'find . -name x -delete'",
];
const analyser = createCommandAnalyser({ protectedBranches, cacheSize: 1024, onFailure: () => (failed = true) });
const severityOf = (finding: DestructiveFinding) => destructiveRule(finding.ruleId).severity;

function judge(request: AnalysisRequest): HookVerdict {
  const { subject, context } = request;
  switch (subject.kind) {
    case "none":
      return ALLOW;
    case "unreadable":
      return undecided(subject.reason);
    case "file-write":
      return verdictOf(fileWriteFindings(subject.path, context), undefined, severityOf);
    case "shell": {
      const analysis = analyser.analyseShell(subject.command, context);
      const unparsed = analysis.unparsed
        ? (analysis.unparsedReason ?? "the command was not fully analysed")
        : undefined;
      return { ...verdictOf(analysis.findings, unparsed, severityOf), changesState: analysis.changesState };
    }
  }
}

port.on("message", (request: AnalysisRequest) => {
  let verdict: HookVerdict;
  try {
    verdict = withinDeadline(performance.now() + request.deadlineMs, () => judge(request));
  } catch (error) {
    if (error instanceof AnalysisDeadlineError) {
      verdict = undecided(`the analysis did not finish within ${Math.round(request.deadlineMs)} ms and was stopped`);
    } else {
      failed = true;
      verdict = undecided(`the analyser failed (${error instanceof Error ? error.message : String(error)})`);
    }
  }
  const reply: AnalysisReply = { id: request.id, verdict, retire: failed };
  port.postMessage(reply);
});
// The first analyses run unoptimised code; doing a few before taking calls keeps a fresh worker's
// first verdicts as quick as the later ones.
for (const command of WARM_UP) analyser.analyseShell(command, { cwd: "/", workspaceRoot: "/", home: "/" });
port.postMessage({ ready: true });
