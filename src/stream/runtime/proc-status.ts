import { readFileSync } from "node:fs";

/** The memory fields of a process's /proc/<pid>/status that the telemetry and the benchmarks read. */
export type ProcStatusField = "VmHWM" | "VmRSS" | "RssAnon" | "RssFile";

/**
 * One read of /proc/<pid>/status (Linux): its memory fields in bytes. Undefined where there is no
 * such file (another OS, or a process that is gone); a field the kernel does not report reads
 * undefined.
 */
export function readProcStatus(pid: number | "self"): ((field: ProcStatusField) => number | undefined) | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${String(pid)}/status`, "utf8");
  } catch {
    return undefined;
  }
  return (field) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text);
    return match === null ? undefined : Number(match[1]) * 1024;
  };
}
