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
 * Both sides are remembered (bounded), so either arrival order finds its partner.
 */
export interface MirrorEntry {
  /** 0 = tool call, 1 = sandbox event. */
  side: 0 | 1;
  seq: number;
  subject: number;
  /** Destructive rules this side alerted on. */
  rules: string[];
  /** 1 when this side counted as a state change. */
  changed: 0 | 1;
  /** 1 once a partner from the other side has claimed it. */
  matched: 0 | 1;
}

export const MAX_MIRROR_ENTRIES = 32;

/** The unmatched entry of the other side that mirrors (side, seq, subject), if any; it is claimed. */
export function claimMirror(entries: MirrorEntry[], side: 0 | 1, seq: number, subject: number, window: number): MirrorEntry | undefined {
  let best: MirrorEntry | undefined;
  for (const entry of entries) {
    if (entry.side === side || entry.matched === 1 || entry.subject !== subject) continue;
    const distance = Math.abs(entry.seq - seq);
    if (distance > window) continue;
    if (best === undefined || distance < Math.abs(best.seq - seq) || (distance === Math.abs(best.seq - seq) && entry.seq < best.seq)) best = entry;
  }
  if (best !== undefined) best.matched = 1;
  return best;
}

export function rememberMirror(entries: MirrorEntry[], entry: MirrorEntry): void {
  entries.push(entry);
  if (entries.length > MAX_MIRROR_ENTRIES) entries.shift();
}
