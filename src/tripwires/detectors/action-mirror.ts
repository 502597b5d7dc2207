/**
 * The same action can reach the monitor twice: as the agent's tool call (`agent_step`, from a
 * transcript or a hook) and as what the sandbox saw run (`sandbox_event`). The pair must raise
 * one destructive alert and count as one state change, whichever arrives first.
 *
 * Matching (docs/tripwires.md, "Agent-only logs"): same run; the tool call's subject — its shell
 * command line, or the file path of a file tool — equals the sandbox event's command (exec) or
 * path (file events), compared as exact text; and their seqs differ by at most
 * `agentTools.mirrorSeqWindow`. Each side is matched at most once (the nearest seq wins), so an
 * agent running the same command twice is two actions, not one.
 *
 * Both sides are remembered (bounded), so either arrival order finds its partner. Every run holds
 * up to MAX_MIRROR_ENTRIES of them, so they are kept as parallel arrays of numbers (one object per
 * entry cost about four times the memory), and the rules as one comma-joined string, almost always
 * empty.
 */
export interface MirrorMemory {
  seqs: number[];
  /** hash53 of the subject text. */
  subjects: number[];
  /** MIRROR_SANDBOX_SIDE | MIRROR_CHANGED | MIRROR_MATCHED bits. */
  flags: number[];
  /** Destructive rule ids that side alerted on, joined with ","; "" for none. */
  rules: string[];
}

/** Set for a sandbox event; clear for a tool call. */
export const MIRROR_SANDBOX_SIDE = 1;
/** The side settled the pair's state change: it counted it, or it failed and nothing changed. */
export const MIRROR_CHANGED = 2;
/** A partner from the other side has claimed it. */
export const MIRROR_MATCHED = 4;

export const MAX_MIRROR_ENTRIES = 32;

export type MirrorSide = "tool_call" | "sandbox_event";

/** What the claiming side needs to know of its partner. */
export interface ClaimedMirror {
  readonly rules: readonly string[];
  readonly changed: boolean;
}

export function emptyMirrorMemory(): MirrorMemory {
  return { seqs: [], subjects: [], flags: [], rules: [] };
}

const sideBit = (side: MirrorSide): number => (side === "sandbox_event" ? MIRROR_SANDBOX_SIDE : 0);

/** The unmatched entry of the other side that mirrors (side, seq, subject), if any; it is claimed. */
export function claimMirror(
  memory: MirrorMemory,
  side: MirrorSide,
  seq: number,
  subject: number,
  window: number,
): ClaimedMirror | undefined {
  const own = sideBit(side);
  let best = -1;
  let bestDistance = 0;
  for (let index = 0; index < memory.seqs.length; index++) {
    const flags = memory.flags[index] ?? 0;
    if ((flags & MIRROR_SANDBOX_SIDE) === own || (flags & MIRROR_MATCHED) !== 0 || memory.subjects[index] !== subject)
      continue;
    const entrySeq = memory.seqs[index] ?? 0;
    const distance = Math.abs(entrySeq - seq);
    if (distance > window) continue;
    if (best === -1 || distance < bestDistance || (distance === bestDistance && entrySeq < (memory.seqs[best] ?? 0))) {
      best = index;
      bestDistance = distance;
    }
  }
  if (best === -1) return undefined;
  const flags = memory.flags[best] ?? 0;
  memory.flags[best] = flags | MIRROR_MATCHED;
  const rules = memory.rules[best] ?? "";
  return { rules: rules === "" ? [] : rules.split(","), changed: (flags & MIRROR_CHANGED) !== 0 };
}

export function rememberMirror(
  memory: MirrorMemory,
  entry: {
    side: MirrorSide;
    seq: number;
    subject: number;
    rules: readonly string[];
    changed: boolean;
    matched: boolean;
  },
): void {
  memory.seqs.push(entry.seq);
  memory.subjects.push(entry.subject);
  memory.flags.push(sideBit(entry.side) | (entry.changed ? MIRROR_CHANGED : 0) | (entry.matched ? MIRROR_MATCHED : 0));
  memory.rules.push(entry.rules.join(","));
  if (memory.seqs.length > MAX_MIRROR_ENTRIES) {
    memory.seqs.shift();
    memory.subjects.shift();
    memory.flags.shift();
    memory.rules.shift();
  }
}
