/**
 * A hard memory limit for one benchmark child, as a container runtime sets it: a memory cgroup of
 * its own (v1 or v2) under this process's, whose limit counts the page cache as well as anonymous
 * memory. It answers what RSS alone cannot for a store that maps its files: LMDB's mapped pages
 * count in RSS but the kernel reclaims them under the limit, so "does the engine run within N MiB"
 * is settled by running it there, OOM-killed or not.
 *
 * Needs a writable cgroup hierarchy (root, or a delegated subtree); `openMemoryCgroup` returns why
 * not otherwise, and the caller reports that instead of a figure.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";

export interface MemoryCgroupUsage {
  readonly limitBytes: number;
  /** Highest charge of the cgroup (anonymous memory and page cache), as the kernel recorded it. */
  readonly peakBytes: number;
  /** Times the kernel killed a process of the cgroup for memory. */
  readonly oomKills: number;
}

export interface MemoryCgroup {
  readonly directory: string;
  /** The command line that runs `command` inside the cgroup (a shell joins it, then execs). */
  wrap(command: string, args: readonly string[]): [string, string[]];
  usage(): MemoryCgroupUsage;
  /** Removes the cgroup (its processes must have exited). */
  close(): void;
}

const read = (path: string): string => readFileSync(path, "utf8").trim();

/** Counters of a flat "key value" file (memory.oom_control, memory.events). */
function counters(path: string): Map<string, number> {
  if (!existsSync(path)) return new Map();
  return new Map(
    read(path)
      .split("\n")
      .map((line) => {
        const [key = "", value = "0"] = line.split(" ");
        return [key, Number(value)] as const;
      }),
  );
}

/** This process's memory cgroup: its mount and path, v1 ("N:memory:/path") before v2 ("0::/path"). */
function ownCgroup(): { version: 1 | 2; directory: string } | string {
  const lines = read("/proc/self/cgroup").split("\n");
  const v1 = lines.find((line) => line.split(":")[1]?.split(",").includes("memory") === true);
  if (v1 !== undefined && existsSync("/sys/fs/cgroup/memory/memory.limit_in_bytes"))
    return { version: 1, directory: `/sys/fs/cgroup/memory${v1.split(":")[2] ?? ""}` };
  const v2 = lines.find((line) => line.startsWith("0::"));
  if (v2 !== undefined && existsSync("/sys/fs/cgroup/cgroup.controllers"))
    return { version: 2, directory: `/sys/fs/cgroup${v2.slice(3)}` };
  return "no memory cgroup hierarchy is mounted under /sys/fs/cgroup";
}

export function openMemoryCgroup(name: string, limitBytes: number): MemoryCgroup | string {
  const own = ownCgroup();
  if (typeof own === "string") return own;
  const directory = `${own.directory}/${name}`;
  try {
    mkdirSync(directory);
    if (own.version === 1) {
      writeFileSync(`${directory}/memory.limit_in_bytes`, String(limitBytes));
      // With swap accounting the limit must cover swap too, or the child swaps instead of being bounded.
      if (existsSync(`${directory}/memory.memsw.limit_in_bytes`))
        writeFileSync(`${directory}/memory.memsw.limit_in_bytes`, String(limitBytes));
    } else {
      writeFileSync(`${directory}/memory.max`, String(limitBytes));
      if (existsSync(`${directory}/memory.swap.max`)) writeFileSync(`${directory}/memory.swap.max`, "0");
    }
  } catch (error) {
    try {
      rmdirSync(directory);
    } catch {
      // It was never made.
    }
    return `cannot make a memory cgroup at ${directory} (${error instanceof Error ? error.message : String(error)}): run as root or in a delegated cgroup`;
  }
  return {
    directory,
    wrap: (command, args) => [
      "/bin/sh",
      ["-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', directory, command, ...args],
    ],
    usage: () =>
      own.version === 1
        ? {
            limitBytes,
            peakBytes: Number(read(`${directory}/memory.max_usage_in_bytes`)),
            oomKills: counters(`${directory}/memory.oom_control`).get("oom_kill") ?? 0,
          }
        : {
            limitBytes,
            peakBytes: existsSync(`${directory}/memory.peak`) ? Number(read(`${directory}/memory.peak`)) : Number.NaN,
            oomKills: counters(`${directory}/memory.events`).get("oom_kill") ?? 0,
          },
    close: () => rmdirSync(directory),
  };
}
