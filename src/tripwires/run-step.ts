import type { AgentEvent, AgentStep, SandboxEvent } from "../contract/facts.ts";
import { actionIdentity, hash53 } from "./action-identity.ts";
import { makeAlert, type TripwireAlert } from "./alert.ts";
import type { CommandAnalyser } from "./commands/command-analyser.ts";
import type { TripwireConfig } from "./config.ts";
import { observeDataFlow } from "./detectors/credential-egress-detector.ts";
import { episodeRoot, groupObservedDeletion, openEpisode } from "./detectors/deletion-episodes.ts";
import { destructiveRule } from "./rules/destructive-rules.ts";
import { observeToolCall, trimLoopWindow } from "./detectors/loop-detector.ts";
import { claimMirror, rememberMirror } from "./detectors/action-mirror.ts";
import { agentToolIntent, endsWithNoMatchCommand, operationIdentity } from "./detectors/agent-tool-intent.ts";
import { endMessageStreak, observeMessage } from "./detectors/message-repeat-detector.ts";
import type { DestructiveFinding } from "./commands/command-analysis.ts";
import { observeStateChange, observeToolResult } from "./detectors/redundancy-detector.ts";
import type { RunState } from "./run-state.ts";
import { admitSeq } from "./seen-seqs.ts";
import { analyseSandboxEvent } from "./commands/sandbox-event-analysis.ts";

/**
 * One record applied to one run's state: the whole run monitor for a single run, synchronous and
 * deterministic. The state is updated in place (it is owned by the caller, who can serialise it at
 * any point); alerts come back in a fixed order.
 */
export function stepRun(
  state: RunState,
  event: AgentEvent,
  config: TripwireConfig,
  analyser: CommandAnalyser,
): TripwireAlert[] {
  const verdict = admitSeq(
    event.type === "agent_step" ? state.seenSteps : state.seenSandboxEvents,
    event.seq,
    config.dedupeWindow,
  );
  if (verdict === "duplicate") {
    state.duplicatesIgnored++;
    return [];
  }
  if (verdict === "late") {
    state.lateIgnored++;
    return [];
  }
  state.lastEventTime = Math.max(state.lastEventTime, event.event_time);
  state.firstEventTime = Math.min(state.firstEventTime, event.event_time);
  state.lastSeq = Math.max(state.lastSeq, event.seq);
  const alerts =
    event.type === "agent_step"
      ? stepAgent(state, event, config, analyser)
      : stepSandbox(state, event, config, analyser);
  state.alertsEmitted += alerts.length;
  return alerts;
}

function stepAgent(
  state: RunState,
  step: AgentStep,
  config: TripwireConfig,
  analyser: CommandAnalyser,
): TripwireAlert[] {
  state.stepsSeen++;
  if (step.kind !== "tool_call" || step.tool === undefined) {
    // Messages and plans are not actions: they neither form nor break a loop. Repeated messages
    // with no tool call in between are their own rule.
    if (step.kind !== "message" || step.observation_digest === undefined) return [];
    return observeMessage(
      state.messages,
      {
        runId: state.runId,
        seq: step.seq,
        eventTime: step.event_time,
        actor: step.actor,
        digest: hash53(step.observation_digest),
      },
      config.messages,
    );
  }
  endMessageStreak(state.messages);
  const action = actionIdentity(step.tool, step.input);
  const alerts: TripwireAlert[] = [];
  const intent = agentToolIntent(step.tool, step.input, config.agentTools);
  // Unknown status (a log that does not say) counts as success: it cannot show a failure either.
  const succeeded = step.status !== "error";
  // What the call would change; changesState is what this record still has to count (a mirror may have).
  let attemptsChange = intent.editsFiles;
  let changesState = attemptsChange;
  let noMatch = false;
  if (intent.command !== undefined) {
    const analysis = analyser.analyseShell(intent.command, {
      cwd: undefined,
      workspaceRoot: undefined,
      home: config.destructive.home,
    });
    attemptsChange = analysis.changesState;
    changesState = attemptsChange;
    noMatch = step.status === "error" && endsWithNoMatchCommand(intent.command, config.loop.noMatchCommands);
    const subject = hash53(intent.command);
    const mirror = claimMirror(state.mirrors, "tool_call", step.seq, subject, config.agentTools.mirrorSeqWindow);
    const findings =
      mirror === undefined
        ? analysis.findings
        : analysis.findings.filter((finding) => !mirror.rules.includes(finding.ruleId));
    state.mirroredAlertsSuppressed += analysis.findings.length - findings.length;
    alerts.push(
      ...destructiveAlerts(
        state,
        findings,
        { seq: step.seq, eventTime: step.event_time, command: intent.command, observedDeletion: false },
        config,
      ),
    );
    const alertedRules = alerts.map((alert) => alert.rule_id);
    if (mirror?.changed === true) changesState = false; // already counted by its sandbox event
    rememberMirror(state.mirrors, {
      side: "tool_call",
      seq: step.seq,
      subject,
      rules: alertedRules,
      changed: changesState,
      matched: mirror !== undefined,
    });
  } else if (intent.path !== undefined) {
    const subject = hash53(intent.path);
    const mirror = claimMirror(state.mirrors, "tool_call", step.seq, subject, config.agentTools.mirrorSeqWindow);
    if (mirror?.changed === true) changesState = false;
    rememberMirror(state.mirrors, {
      side: "tool_call",
      seq: step.seq,
      subject,
      rules: [],
      changed: changesState,
      matched: mirror !== undefined,
    });
  }
  const operation = attemptsChange ? operationIdentity(step.tool, intent) : 0;
  // Only a change that happened is progress: a rejected edit or a failed command changed nothing.
  const progressed = changesState && succeeded;
  if (progressed) observeStateChange(state.redundancy);
  const digest = step.observation_digest === undefined ? undefined : hash53(step.observation_digest);
  alerts.push(
    ...observeToolCall(
      state.loop,
      {
        runId: state.runId,
        seq: step.seq,
        eventTime: step.event_time,
        action,
        tool: step.tool,
        failed: !succeeded && !noMatch,
        digest: digest ?? 0,
        epochAfter: state.redundancy.epoch,
        changed: progressed,
        operation,
        operationEdits: intent.command === undefined,
      },
      config.loop,
    ),
  );
  trimLoopWindow(state.loop, config.loop.actionWindow);
  alerts.push(
    ...observeToolResult(
      state.redundancy,
      { runId: state.runId, seq: step.seq, eventTime: step.event_time, action, digest },
      config.redundancy,
    ),
  );
  return alerts;
}

function stepSandbox(
  state: RunState,
  event: SandboxEvent,
  config: TripwireConfig,
  analyser: CommandAnalyser,
): TripwireAlert[] {
  state.sandboxEventsSeen++;
  const analysis = analyseSandboxEvent(event, analyser, config.destructive.home);
  const subjectText =
    event.kind === "exec"
      ? event.command
      : event.kind === "file_write" || event.kind === "file_delete" || event.kind === "file_read"
        ? event.path
        : undefined;
  const subject = subjectText === undefined ? undefined : hash53(subjectText);
  const mirror =
    subject === undefined
      ? undefined
      : claimMirror(state.mirrors, "sandbox_event", event.seq, subject, config.agentTools.mirrorSeqWindow);
  // The tool call this event mirrors already settled the state change and raised its alerts.
  const changesState = analysis.changesState && mirror?.changed !== true;
  // A command that exited non-zero is no progress; an event without an exit code is taken as done.
  if (changesState && (event.exit_code === undefined || event.exit_code === 0)) observeStateChange(state.redundancy);
  const findings =
    mirror === undefined
      ? analysis.findings
      : analysis.findings.filter((finding) => !mirror.rules.includes(finding.ruleId));
  state.mirroredAlertsSuppressed += analysis.findings.length - findings.length;
  const alerts = destructiveAlerts(
    state,
    findings,
    {
      seq: event.seq,
      eventTime: event.event_time,
      command: event.command,
      observedDeletion: event.kind === "file_delete",
    },
    config,
  );
  if (subject !== undefined)
    rememberMirror(state.mirrors, {
      side: "sandbox_event",
      seq: event.seq,
      subject,
      rules: alerts.map((alert) => alert.rule_id),
      changed: changesState,
      matched: mirror !== undefined,
    });
  if (analysis.credentialReads.length > 0 || analysis.egressTargets.length > 0) {
    alerts.push(
      ...observeDataFlow(state.credential, {
        runId: state.runId,
        seq: event.seq,
        eventTime: event.event_time,
        credentialReads: analysis.credentialReads,
        egressTargets: analysis.egressTargets,
        command: event.command,
      }),
    );
  }
  return alerts;
}

/** One alert per destructive rule per record, with observed deletions grouped into episodes. */
function destructiveAlerts(
  state: RunState,
  findings: readonly DestructiveFinding[],
  record: { seq: number; eventTime: number; command: string | undefined; observedDeletion: boolean },
  config: TripwireConfig,
): TripwireAlert[] {
  const alerts: TripwireAlert[] = [];
  for (const finding of findings) {
    if (alerts.some((alert) => alert.rule_id === finding.ruleId)) continue; // one alert per rule per record: its seq range is the id
    if (finding.path !== undefined && finding.ruleId.startsWith("fs-delete-")) {
      if (record.observedDeletion) {
        if (
          groupObservedDeletion(
            state.deletionEpisodes,
            finding.ruleId,
            finding.path,
            record.eventTime,
            config.destructive.deletionQuietSeconds * 1000,
          )
        ) {
          state.deletionsGrouped++;
          continue;
        }
      } else {
        openEpisode(state.deletionEpisodes, finding.ruleId, episodeRoot(finding.path, true), record.eventTime);
      }
    }
    const rule = destructiveRule(finding.ruleId);
    alerts.push(
      makeAlert(rule, {
        run_id: state.runId,
        event_time: record.eventTime,
        evidence: {
          seq_from: record.seq,
          seq_to: record.seq,
          command: record.command ?? finding.command,
          path: finding.path,
          detail: finding.detail,
        },
        message: `${rule.severity === "critical" ? "destructive action" : "risky action"} (${rule.id}): ${finding.detail}`,
      }),
    );
  }
  return alerts;
}
