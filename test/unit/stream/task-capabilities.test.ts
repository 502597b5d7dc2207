import { describe, expect, it } from "vitest";
import { NOTHING, type ProcessResult, type Task } from "../../../src/stream/processor.ts";
import {
  acknowledged,
  closeTask,
  goLivePages,
  restore,
  resumeFrom,
} from "../../../src/stream/runtime/task-capabilities.ts";

const plain: Task<unknown> = { process: () => NOTHING };

describe("task capabilities, read in one place by both transports", () => {
  it("a task with only process rebuilds from 0, restores nothing and goes live with one empty page", async () => {
    expect(resumeFrom(plain, "42")).toBe("0");
    expect(restore(plain, [])).toBe(NOTHING);
    expect([...goLivePages(plain)]).toEqual([NOTHING]);
    await expect(acknowledged(plain, "3")).resolves.toBeUndefined();
    await expect(closeTask(plain)).resolves.toBeUndefined();
  });

  it("a task with local state and a source restore is asked, in order", async () => {
    const calls: string[] = [];
    const page: ProcessResult = { outputs: [{ topic: "results", key: "k", value: null }] };
    const task: Task<unknown> = {
      process: () => NOTHING,
      localState: {
        resumeFrom: (end) => (calls.push(`resume ${end}`), "7"),
        committed: (next) => Promise.resolve(void calls.push(`committed ${next}`)),
        close: () => Promise.resolve(void calls.push("close")),
      },
      sourceRestore: {
        restore: (records) => (calls.push(`restore ${String(records.length)}`), NOTHING),
        goLive: () => [page, page],
      },
    };
    expect(resumeFrom(task, "9")).toBe("7");
    restore(task, []);
    expect([...goLivePages(task)]).toEqual([page, page]);
    await acknowledged(task, "8");
    await closeTask(task);
    expect(calls).toEqual(["resume 9", "restore 0", "committed 8", "close"]);
  });
});
