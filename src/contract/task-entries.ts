import type { z } from "zod";
import { canonicalJson } from "./canonical-json.ts";
import { definedTaskSchema } from "./fact-schema.ts";
import { isRecord } from "./fast-fields.ts";
import { rejectionOf } from "./issue-rejection.ts";
import type { Rejection } from "./rejection.ts";

/**
 * Contract revision 3 change 5: a snapshot is read task by task. A malformed field of one entry
 * (a blank task_id, a member that is not an identifier, a blank role_template, an unknown
 * template_assignment, an unknown key) is left out of that task, which then reads as absence does
 * (MISSING_TASK_IDENTITY, UNDEFINED_TASK_MEMBERSHIP, INCOMPLETE_COHORT_COORDINATES), and the other
 * tasks are read as declared. An entry that is not an object is a task with nothing declared. A
 * task_id declared twice is one task: as declared when the entries are identical, otherwise with
 * its membership left out (it is not exact). A `tasks` that is not an array declares no task.
 */
export interface TaskEntries {
  /** The entries to validate as the snapshot's tasks: only fields that passed, one entry per task_id. */
  readonly tasks: readonly Record<string, unknown>[];
  /** One rejection per field, entry or list left out, by dotted path (`tasks.2.role_template`). */
  readonly invalid: readonly Rejection[];
  /**
   * When anything was left out, the declared list in canonical JSON (null-valued keys of entries
   * dropped: null is absence), kept in the fact's `invalid_measures`: two snapshots that differ only
   * in what was left out are two records, and a producer can forward the snapshot as reported.
   */
  readonly declared: string | undefined;
}

const TASK_SHAPE: Readonly<Record<string, z.ZodType>> = definedTaskSchema.shape;

export function readTaskEntries(tasks: unknown): TaskEntries {
  if (!Array.isArray(tasks)) {
    const reason = tasks === undefined || tasks === null ? "MISSING_FIELD" : "WRONG_TYPE";
    const detail = "tasks must be an array of defined tasks; the snapshot declares none";
    return { tasks: [], invalid: [{ reason, field: "tasks", detail }], declared: declaredForm(tasks) };
  }
  // Array.from visits the holes of a sparse array too (as undefined entries), unlike map.
  const read = Array.from(tasks, (entry: unknown, position) => readEntry(entry, position));
  const kept: Record<string, unknown>[] = [];
  const invalid: Rejection[] = [];
  /** task_id → its first entry's place in `kept`, position and canonical form. */
  const firsts = new Map<string, { index: number; position: number; form: string }>();
  for (const [position, { task, problems }] of read.entries()) {
    const taskId = task["task_id"];
    const first = typeof taskId === "string" ? firsts.get(taskId) : undefined;
    if (typeof taskId !== "string" || first === undefined) {
      if (typeof taskId === "string") {
        firsts.set(taskId, { index: kept.length, position, form: entryForm(tasks[position]) });
      }
      kept.push(task);
      invalid.push(...problems);
      continue;
    }
    const identical = entryForm(tasks[position]) === first.form;
    // A task_id declared twice with different entries has no exact membership: only its identity is kept.
    if (!identical) kept[first.index] = { task_id: taskId };
    const outcome = identical
      ? "identical, read as one task"
      : "different, read as one task without membership (UNDEFINED_TASK_MEMBERSHIP)";
    const detail = `task ${taskId} is declared again (first at tasks.${first.position}); the entries are ${outcome}`;
    invalid.push({ reason: "DUPLICATE_TASK_IN_SNAPSHOT", field: `tasks.${position}`, detail });
  }
  return { tasks: kept, invalid, declared: invalid.length === 0 ? undefined : declaredForm(tasks) };
}

/** One entry's fields that pass their own rule, and a rejection for each one that does not. */
function readEntry(entry: unknown, position: number): { task: Record<string, unknown>; problems: Rejection[] } {
  const path = `tasks.${position}`;
  if (!isRecord(entry)) {
    const detail = `${path}: a defined task is an object; this one declares nothing`;
    return { task: {}, problems: [{ reason: "WRONG_TYPE", field: path, detail }] };
  }
  const task: Record<string, unknown> = {};
  const problems: Rejection[] = [];
  for (const key in entry) {
    const field = `${path}.${key}`;
    const rule = Object.hasOwn(TASK_SHAPE, key) ? TASK_SHAPE[key] : undefined;
    if (rule === undefined) {
      const detail = `${field}: a defined task has only task_id, members, role_template and template_assignment`;
      problems.push({ reason: "UNKNOWN_FIELD", field, detail });
      continue;
    }
    const parsed = rule.safeParse(entry[key]);
    const issue = parsed.error?.issues[0];
    if (issue === undefined) {
      task[key] = entry[key];
      continue;
    }
    const rejection = rejectionOf({ ...issue, path: [key, ...issue.path] }, entry);
    problems.push({ ...rejection, field, detail: `${path}.${rejection.detail}` });
  }
  return { task, problems };
}

/** An entry's canonical JSON with null-valued keys dropped (null is absence), to compare two entries. */
function entryForm(entry: unknown): string {
  return canonicalOrRaw(withoutNulls(entry));
}

function declaredForm(tasks: unknown): string {
  return canonicalOrRaw(Array.isArray(tasks) ? tasks.map(withoutNulls) : (tasks ?? null));
}

/** An entry's own fields read null as absent; an unknown key keeps its null, since it is reported as a dead letter. */
function withoutNulls(entry: unknown): unknown {
  if (!isRecord(entry)) return entry ?? null;
  const kept: Record<string, unknown> = {};
  for (const key in entry) {
    const value = entry[key];
    if (!Object.hasOwn(TASK_SHAPE, key) || (value !== null && value !== undefined)) kept[key] = value;
  }
  return kept;
}

/** RFC 8785 when the value has a JSON form; otherwise its JSON as far as it goes (bigints as digits). */
function canonicalOrRaw(value: unknown): string {
  try {
    return canonicalJson(value);
  } catch {
    const json = JSON.stringify(value, (_, inner: unknown) => (typeof inner === "bigint" ? inner.toString() : inner));
    return json ?? "null";
  }
}
