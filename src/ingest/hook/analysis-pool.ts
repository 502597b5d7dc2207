import { Worker } from "node:worker_threads";
import type { PathContext } from "../../tripwires/commands/path-resolution.ts";
import { ALLOW, undecided, type HookSubject, type HookVerdict } from "./claude-code-hook.ts";

/**
 * The hook's analysers, each in its own worker thread, so that no input can hold a call past its
 * deadline or damage another call. At the deadline the call is answered undecided; the worker
 * stops that analysis on its own (analysis-deadline.ts withinDeadline) and takes the next call, and one
 * still busy KILL_GRACE_MS later is terminated (V8 stops it even inside the WASM parser) and
 * replaced, as is one that crashed, ran out of heap or reported a failure inside the analyser.
 * Calls wait in arrival order for a free worker; a call whose deadline passes while it waits is
 * undecided.
 */
export interface AnalysisRequest {
  readonly id: number;
  /** The worker stops the analysis itself after this long. */
  readonly deadlineMs: number;
  readonly subject: HookSubject;
  readonly context: PathContext;
}

export interface AnalysisReply {
  readonly id: number;
  readonly verdict: HookVerdict;
  /** The analyser failed inside this worker: replace it. */
  readonly retire: boolean;
}

export type RecycleCause = "timeout" | "crash" | "failure";

export interface AnalysisPoolOptions {
  readonly workers: number;
  /** Old-generation heap per worker; a worker over it is stopped by V8 and replaced. */
  readonly maxHeapMb: number;
  readonly onRecycle?: (cause: RecycleCause, detail: string) => void;
}

export interface PoolHealth {
  readonly workers: number;
  /** Workers that have loaded the analyser and take calls. */
  readonly ready: number;
  readonly busy: number;
  readonly queued: number;
  readonly judged: number;
  readonly undecided: number;
  readonly recycled: Readonly<Record<RecycleCause, number>>;
}

interface Job {
  readonly request: AnalysisRequest;
  readonly resolve: (verdict: HookVerdict) => void;
  /** `performance.now()` when the call's deadline passes. */
  readonly dueAt: number;
  timer: NodeJS.Timeout | undefined;
  killTimer: NodeJS.Timeout | undefined;
  slot: Slot | undefined;
  done: boolean;
}

interface Slot {
  readonly worker: Worker;
  /** Settles when the worker has loaded the analyser, or failed to. */
  readonly loaded: Promise<void>;
  /** Only a loaded worker takes calls: a call's deadline is for the analysis, not for loading. */
  ready: boolean;
  job: Job | undefined;
}

const WORKER_URL = new URL("./analysis-worker.ts", import.meta.url);
/** How long past a call's deadline its worker may take to stop on its own before it is terminated. */
const KILL_GRACE_MS = 250;

export class AnalysisPool {
  private readonly options: AnalysisPoolOptions;
  private readonly slots: (Slot | undefined)[];
  private readonly queue: Job[] = [];
  private readonly recycled: Record<RecycleCause, number> = { timeout: 0, crash: 0, failure: 0 };
  private nextId = 0;
  private judged = 0;
  private undecidedCount = 0;
  private closed = false;

  constructor(options: AnalysisPoolOptions) {
    this.options = options;
    this.slots = Array.from({ length: Math.max(1, options.workers) }, () => undefined);
    for (let index = 0; index < this.slots.length; index++) this.slots[index] = this.spawn(index);
  }

  /** The verdict on one subject, or undecided (with the reason) if none is reached within deadlineMs. */
  judge(subject: HookSubject, context: PathContext, deadlineMs: number): Promise<HookVerdict> {
    if (subject.kind === "none") return Promise.resolve(this.count(ALLOW));
    if (subject.kind === "unreadable") return Promise.resolve(this.count(undecided(subject.reason)));
    if (this.closed) return Promise.resolve(this.count(undecided("the hook is shutting down")));
    return new Promise((resolve) => {
      const job: Job = {
        request: { id: this.nextId++, deadlineMs, subject, context },
        resolve,
        dueAt: performance.now() + deadlineMs,
        timer: undefined,
        killTimer: undefined,
        slot: undefined,
        done: false,
      };
      job.timer = setTimeout(() => this.expire(job), deadlineMs);
      this.queue.push(job);
      this.dispatch();
    });
  }

  /** Settles once every worker has loaded the analyser; rejects if one could not within timeoutMs. */
  async ready(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`the analyser did not load within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([Promise.all(this.slots.map((slot) => slot?.loaded)), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  health(): PoolHealth {
    return {
      workers: this.slots.length,
      ready: this.slots.filter((slot) => slot?.ready === true).length,
      busy: this.slots.filter((slot) => slot?.job !== undefined).length,
      queued: this.queue.length,
      judged: this.judged,
      undecided: this.undecidedCount,
      recycled: { ...this.recycled },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.finish(job, undecided("the hook is shutting down"));
    await Promise.all(this.slots.map(async (slot) => slot?.worker.terminate()));
  }

  private spawn(index: number): Slot {
    const resourceLimits = { maxOldGenerationSizeMb: this.options.maxHeapMb };
    const worker = new Worker(WORKER_URL, { resourceLimits, stdout: true, stderr: true });
    const loaded = new Promise<void>((resolve, reject) => {
      worker.once("message", () => resolve());
      worker.once("exit", (code) => reject(new Error(`the analysis worker exited with code ${code} while loading`)));
    });
    loaded.catch(() => undefined);
    const slot: Slot = { worker, loaded, ready: false, job: undefined };
    worker.on("message", (message: AnalysisReply | { ready: true }) => {
      if (!("id" in message)) {
        slot.ready = true;
        this.dispatch();
        return;
      }
      if (slot.job?.request.id !== message.id) return;
      const job = slot.job;
      slot.job = undefined;
      clearTimeout(job.killTimer);
      this.finish(job, message.verdict);
      if (message.retire) this.replace(index, slot, "failure", "the analyser failed inside the worker");
      else this.dispatch();
    });
    worker.on("error", (error) => this.crashed(index, slot, error.message));
    worker.on("exit", (code) => this.crashed(index, slot, `the worker exited with code ${code}`));
    // A worker's own output (e.g. the WASM runtime's abort message) must not reach the hook's stdout.
    worker.stdout.resume();
    worker.stderr.resume();
    return slot;
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const index = this.slots.findIndex((slot) => slot !== undefined && slot.ready && slot.job === undefined);
      const slot = this.slots[index];
      const job = this.queue.shift();
      if (slot === undefined || job === undefined) {
        if (job !== undefined) this.queue.unshift(job);
        return;
      }
      slot.job = job;
      job.slot = slot;
      // The worker's own time bound is what is left of the call's deadline after waiting here.
      const request: AnalysisRequest = { ...job.request, deadlineMs: Math.max(1, job.dueAt - performance.now()) };
      slot.worker.postMessage(request);
    }
  }

  private expire(job: Job): void {
    job.timer = undefined;
    const slot = job.slot;
    const deadlineMs = job.request.deadlineMs;
    if (slot === undefined) {
      this.queue.splice(this.queue.indexOf(job), 1);
      this.finish(job, undecided(`no analyser was free within ${deadlineMs} ms`));
      return;
    }
    this.finish(job, undecided(`the analysis did not finish within ${deadlineMs} ms and was stopped`));
    job.killTimer = setTimeout(() => {
      if (slot.job !== job) return;
      slot.job = undefined;
      const detail = `the worker was still busy ${KILL_GRACE_MS} ms after the ${deadlineMs} ms deadline`;
      this.replace(this.slots.indexOf(slot), slot, "timeout", detail);
    }, KILL_GRACE_MS);
  }

  private crashed(index: number, slot: Slot, detail: string): void {
    if (this.slots[index] !== slot || this.closed) return;
    const job = slot.job;
    slot.job = undefined;
    if (job !== undefined) this.finish(job, undecided(`the analyser crashed (${detail})`));
    this.replace(index, slot, "crash", detail);
  }

  private replace(index: number, slot: Slot, cause: RecycleCause, detail: string): void {
    if (index === -1 || this.slots[index] !== slot || this.closed) return;
    this.slots[index] = undefined;
    this.recycled[cause]++;
    this.options.onRecycle?.(cause, detail);
    void slot.worker.terminate();
    this.slots[index] = this.spawn(index);
    this.dispatch();
  }

  private finish(job: Job, verdict: HookVerdict): void {
    if (job.done) return;
    job.done = true;
    if (job.timer !== undefined) clearTimeout(job.timer);
    job.timer = undefined;
    job.resolve(this.count(verdict));
  }

  private count(verdict: HookVerdict): HookVerdict {
    this.judged++;
    if (verdict.decision === "undecided") this.undecidedCount++;
    return verdict;
  }
}
