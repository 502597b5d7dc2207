import { z } from "zod";

/**
 * Run-monitor configuration, validated once at construction. Defaults are the documented ones in
 * docs/tripwires.md; every bound here is also a memory bound per run.
 */
export const tripwireConfigSchema = z
  .strictObject({
    loop: z
      .strictObject({
        minCycleLength: z.number().int().min(1).default(1),
        maxCycleLength: z.number().int().min(1).max(32).default(8),
        minRepetitions: z.number().int().min(2).default(3),
        failingStepRepeats: z.number().int().min(2).default(3),
        /** Failures of one operation with varied inputs (loop-failing-operation) that alert. */
        failingOperationRepeats: z.number().int().min(2).default(4),
        /** Tool calls kept per run (seq-sorted ring) for cycle and failing-step detection. */
        actionWindow: z.number().int().min(2).max(4096).default(64),
        /**
         * Commands whose non-zero exit only means "no match" or "false" (grep finding nothing,
         * `test -f` on a missing file, diff finding a difference): a shell tool call that ends in
         * error with one of them as its final command is not a failure for the loop rules.
         */
        noMatchCommands: z
          .array(z.string().min(1))
          .default([
            "grep",
            "egrep",
            "fgrep",
            "rg",
            "ag",
            "ack",
            "git grep",
            "test",
            "[",
            "[[",
            "diff",
            "cmp",
            "git diff",
            "pgrep",
            "which",
            "command -v",
          ]),
      })
      .prefault({}),
    messages: z
      .strictObject({
        /** The same message (by observation digest) this many times with no tool call in between alerts. */
        minRepeats: z.number().int().min(2).default(4),
        /** Actors whose messages are not judged (the human typing the same prompt is not the agent being stuck). */
        ignoredActors: z.array(z.string()).default(["user", "human"]),
        /** Distinct message digests remembered since the last tool call. */
        memory: z.number().int().min(1).max(1024).default(32),
      })
      .prefault({}),
    agentTools: z
      .strictObject({
        /** Tool names whose input's `command`/`cmd` is a shell command line, analysed like a sandbox exec. */
        shell: z
          .array(z.string().min(1))
          .default([
            "Bash",
            "bash",
            "shell",
            "execute_bash",
            "run_command",
            "exec_command",
            "shell_command",
            "local_shell",
            "container.exec",
            "run_shell_command",
            "terminal",
          ]),
        /** Tool names that change files (their `command: "view"` form excepted): a state change for the loop and redundancy rules. */
        edit: z
          .array(z.string().min(1))
          .default([
            "Edit",
            "MultiEdit",
            "Write",
            "NotebookEdit",
            "str_replace_editor",
            "str_replace_based_edit_tool",
            "edit",
            "create",
            "insert",
            "append",
            "apply_patch",
            "write",
            "write_file",
            "edit_file",
            "replace",
          ]),
        /**
         * A sandbox event mirrors a tool call (the same action reported twice: by the agent log and
         * by the sandbox) when its command (or path) equals the tool call's and their seqs differ
         * by at most this much: one alert and one state change for the pair, not two.
         */
        mirrorSeqWindow: z.number().int().min(0).max(1024).default(8),
      })
      .prefault({}),
    redundancy: z
      .strictObject({
        /** Recent tool calls over which the redundant count and share are judged. */
        window: z.number().int().min(1).max(4096).default(20),
        minRedundantSteps: z.number().int().min(1).default(5),
        minShare: z.number().gt(0).max(1).default(0.4),
        /** The share is only judged once the window holds this many tool calls. */
        minStepsForShare: z.number().int().min(1).default(10),
        /** Distinct actions whose last observation is remembered per run. */
        observationMemory: z.number().int().min(1).max(65536).default(128),
      })
      .prefault({}),
    destructive: z
      .strictObject({
        protectedBranches: z
          .array(z.string().min(1))
          .default(["main", "master", "trunk", "develop", "production", "release/*"]),
        /** Home directory of every run, when the deployment knows it; otherwise inferred from workspace_root or symbolic. */
        home: z.string().startsWith("/").optional(),
        /**
         * Observed file_delete events under a directory already alerted on (same rule) are grouped
         * while they keep coming within this many seconds of event time; 0 alerts on every one.
         */
        deletionQuietSeconds: z.number().min(0).max(86_400).default(60),
      })
      .prefault({}),
    /** A run with no event for this long, in event time relative to the newest event seen, is evicted. */
    idleExpiryMinutes: z.number().positive().default(30),
    /** Recent seqs remembered per record type for duplicate detection; older seqs are ignored as late. */
    dedupeWindow: z.number().int().min(16).max(65536).default(512),
    /** Distinct commands whose analysis is memoised (not state: a pure cache). */
    analysisCacheSize: z.number().int().min(0).default(8192),
  })
  .check((context) => {
    const { loop } = context.value;
    if (loop.minCycleLength > loop.maxCycleLength)
      context.issues.push({
        code: "custom",
        input: loop,
        path: ["loop"],
        message: "minCycleLength must be ≤ maxCycleLength",
      });
    if (loop.actionWindow < loop.maxCycleLength * loop.minRepetitions)
      context.issues.push({
        code: "custom",
        input: loop,
        path: ["loop", "actionWindow"],
        message: "actionWindow must hold maxCycleLength × minRepetitions actions",
      });
    if (loop.actionWindow < loop.failingStepRepeats)
      context.issues.push({
        code: "custom",
        input: loop,
        path: ["loop", "actionWindow"],
        message: "actionWindow must hold failingStepRepeats actions",
      });
    if (loop.actionWindow < loop.failingOperationRepeats) {
      const message = "actionWindow must hold failingOperationRepeats actions";
      context.issues.push({ code: "custom", input: loop, path: ["loop", "actionWindow"], message });
    }
  });

export type TripwireConfigInput = z.input<typeof tripwireConfigSchema>;
export type TripwireConfig = z.output<typeof tripwireConfigSchema>;

export function parseTripwireConfig(input: TripwireConfigInput = {}): TripwireConfig {
  return tripwireConfigSchema.parse(input);
}
