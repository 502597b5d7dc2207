import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hash53 } from "../../tripwires/action-identity.ts";
import { parseTripwireConfig, type TripwireConfig } from "../../tripwires/config.ts";
import type { HookSubject, HookVerdict, PreToolUseInput, ToolResultInput } from "./claude-code-hook.ts";
import type { LoopGuardMode } from "./hook-settings.ts";
import { emptySessionLoop, guardCall, MAX_PENDING, observeResult, type SessionLoop } from "./loop-guard.ts";

/** Sessions the guard keeps; past this, the least recently active are forgotten. */
const MAX_SESSIONS = 256;

/** The loop guard of a running hook: each call reads, updates and writes its session's state. */
export interface LoopGuard {
  readonly mode: Exclude<LoopGuardMode, "off">;
  /** The reason to stop this call (it repeats a failing operation), or undefined. */
  before(input: PreToolUseInput, subject: HookSubject, verdict: HookVerdict): string | undefined;
  after(result: ToolResultInput, subject: HookSubject): void;
}

/** The run monitor's loop settings with the guard's threshold (`--loop-guard-after`) as the rule's. */
export function loopGuardConfig(after: number): TripwireConfig["loop"] {
  return parseTripwireConfig({ loop: { failingOperationRepeats: after } }).loop;
}

export function openLoopGuard(
  mode: Exclude<LoopGuardMode, "off">,
  spoolDir: string,
  config: TripwireConfig["loop"],
): LoopGuard {
  const store = new LoopGuardStore(spoolDir, { maxSessions: MAX_SESSIONS, window: config.actionWindow });
  return {
    mode,
    before(input, subject, verdict) {
      const session = store.load(input.sessionId);
      const reason = guardCall(session, input, subject, verdict, config.failingOperationRepeats);
      store.save(input.sessionId, session);
      return reason;
    },
    after(result, subject) {
      const session = store.load(result.sessionId);
      observeResult(session, result, subject, config, Date.now());
      store.save(result.sessionId, session);
    },
  };
}

/**
 * The loop guard's sessions, one small JSON file each under `<spool>/loop-guard/`, so that the
 * warm server and the command form judging in process share them and a restart loses nothing.
 * Bounded: a session holds the loop detector's window and MAX_PENDING calls, and past
 * `maxSessions` files the least recently written are removed. A file that is not one this store
 * wrote (too big, malformed) reads as a new session.
 */
export class LoopGuardStore {
  private readonly dir: string;
  private readonly maxSessions: number;
  private readonly window: number;

  constructor(spoolDir: string, options: { readonly maxSessions: number; readonly window: number }) {
    this.dir = join(spoolDir, "loop-guard");
    this.maxSessions = options.maxSessions;
    this.window = options.window;
  }

  load(sessionId: string): SessionLoop {
    let value: unknown;
    try {
      const text = readFileSync(this.fileOf(sessionId), "utf8");
      if (text.length > this.maxBytes()) return emptySessionLoop();
      value = JSON.parse(text);
    } catch {
      return emptySessionLoop();
    }
    return this.isSession(value) ? value : emptySessionLoop();
  }

  /**
   * Replaces the session's file at once (write, then rename): a reader never sees half of it.
   * Two processes updating one session together keep the later write only.
   */
  save(sessionId: string, session: SessionLoop): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = this.fileOf(sessionId);
    const isNew = !exists(file);
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(session), { mode: 0o600 });
    renameSync(temporary, file);
    if (isNew) this.evict();
  }

  private fileOf(sessionId: string): string {
    // The id is the agent's: hashed, it cannot name a path outside the directory.
    return join(this.dir, `${hash53(sessionId).toString(16)}.json`);
  }

  /** Bytes of a full session: seven rings of 16-digit numbers, episodes and the pending calls. */
  private maxBytes(): number {
    return 1024 + (this.window + 1) * 7 * 20 + 2 * 16 * 40 + MAX_PENDING * 24;
  }

  private evict(): void {
    const files = readdirSync(this.dir).filter((name) => name.endsWith(".json"));
    if (files.length <= this.maxSessions) return;
    const aged = files.map((name) => ({ name, at: mtimeOf(join(this.dir, name)) })).sort((a, b) => a.at - b.at);
    for (const { name } of aged.slice(0, files.length - this.maxSessions))
      rmSync(join(this.dir, name), { force: true });
  }

  private isSession(value: unknown): value is SessionLoop {
    if (typeof value !== "object" || value === null) return false;
    const session = value as Record<string, unknown>;
    const loop = session["loop"] as Record<string, unknown> | null | undefined;
    if (typeof loop !== "object" || loop === null) return false;
    const rings = ["seqs", "actions", "errors", "digests", "epochs", "changed", "operations"].map((key) => loop[key]);
    const length = Array.isArray(rings[0]) ? rings[0].length : -1;
    const ringsValid =
      length >= 0 &&
      length <= this.window + 1 &&
      rings.every((ring) => Array.isArray(ring) && ring.length === length && ring.every(Number.isFinite));
    const open = loop["openCycle"] as Record<string, unknown> | null | undefined;
    const openValid =
      open === null ||
      (typeof open === "object" && ["cycleLength", "seqFrom", "lastSeq"].every((key) => Number.isFinite(open?.[key])));
    return (
      ringsValid &&
      openValid &&
      pairs(loop["openFailures"]) &&
      pairs(loop["openOperations"]) &&
      pairs(session["pending"]) &&
      Number.isInteger(session["epoch"]) &&
      Number.isInteger(session["calls"])
    );
  }
}

function pairs(value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.length <= MAX_PENDING &&
    value.every((pair) => Array.isArray(pair) && pair.length === 2 && pair.every(Number.isFinite))
  );
}

function exists(file: string): boolean {
  try {
    statSync(file);
    return true;
  } catch {
    return false;
  }
}

function mtimeOf(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}
