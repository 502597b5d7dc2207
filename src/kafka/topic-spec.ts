import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { ConfigError } from "../errors.ts";

/** The topic spec file shipped with the project. */
export const DEFAULT_TOPICS_FILE = fileURLToPath(new URL("../../topics/topics.json", import.meta.url));

const topicName = z.string().regex(/^[A-Za-z0-9._-]{1,249}$/, "must be 1..249 of A-Z a-z 0-9 . _ -");

export const TopicSpecSchema = z.strictObject({
  name: topicName,
  /** The topology's name for the topic (src/stream/topic-names.ts); topics without one are not read by the processors. */
  role: z
    .string()
    .regex(/^[a-z][A-Za-z]*$/, "must be a camelCase identifier, e.g. engineFacts")
    .optional(),
  description: z.string().min(1),
  partitions: z.int().min(1).max(10_000),
  replication: z.int().min(1).max(32),
  cleanupPolicy: z.enum(["delete", "compact", "compact,delete"]),
  /** -1 keeps data forever (the usual choice for compacted topics). */
  retentionMs: z.int().min(-1),
  key: z.string().min(1),
  value: z.string().min(1),
  /** Further topic-level configs, by their Kafka names; values as Kafka spells them. */
  configs: z
    .record(
      z.string().regex(/^[a-z][a-z0-9.]*$/, "must be a Kafka config name like min.cleanable.dirty.ratio"),
      z.string(),
    )
    .optional(),
});

export const TopicSpecFileSchema = z
  .strictObject({
    $comment: z.string().optional(),
    topics: z.array(TopicSpecSchema).min(1),
  })
  .superRefine((file, context) => {
    const seen = new Set<string>();
    const roles = new Set<string>();
    file.topics.forEach((topic, index) => {
      if (seen.has(topic.name))
        context.addIssue({
          code: "custom",
          path: ["topics", index, "name"],
          message: `duplicate topic "${topic.name}"`,
        });
      seen.add(topic.name);
      if (topic.role !== undefined && roles.has(topic.role))
        context.addIssue({
          code: "custom",
          path: ["topics", index, "role"],
          message: `duplicate role "${topic.role}"`,
        });
      if (topic.role !== undefined) roles.add(topic.role);
      for (const reserved of ["cleanup.policy", "retention.ms"]) {
        if (topic.configs?.[reserved] !== undefined) {
          context.addIssue({
            code: "custom",
            path: ["topics", index, "configs", reserved],
            message: "set it with cleanupPolicy / retentionMs instead",
          });
        }
      }
    });
  });

export type TopicSpec = z.infer<typeof TopicSpecSchema>;
export type TopicSpecFile = z.infer<typeof TopicSpecFileSchema>;

/** A spec file that cannot be read, is not valid JSON or breaks the schema; the problem names every bad field. */
function topicSpecError(source: string, problem: string): ConfigError {
  return new ConfigError({ field: source, problem, fix: "correct the file (topics/topics.json shows every field)" });
}

export function parseTopicSpecFile(text: string, source: string): TopicSpecFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw topicSpecError(source, `not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const result = TopicSpecFileSchema.safeParse(json);
  if (!result.success) {
    const problems = result.error.issues.map(
      (issue) => `  ${issue.path.map(String).join(".") || "(file)"}: ${issue.message}`,
    );
    throw topicSpecError(source, `invalid topic spec:\n${problems.join("\n")}`);
  }
  return result.data;
}

/** A topic's name under a deployment's namespace prefix (none: the name as specified). */
export function prefixedTopicName(prefix: string, name: string): string {
  return prefix === "" ? name : `${prefix}.${name}`;
}

/** The shipped spec file, read synchronously: topic names are needed before any I/O starts. */
export function loadShippedTopicSpecFile(): TopicSpecFile {
  return parseTopicSpecFile(readFileSync(DEFAULT_TOPICS_FILE, "utf8"), DEFAULT_TOPICS_FILE);
}

export async function loadTopicSpecFile(path: string = DEFAULT_TOPICS_FILE): Promise<TopicSpecFile> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw topicSpecError(path, `cannot read: ${error instanceof Error ? error.message : String(error)}`);
  }
  return parseTopicSpecFile(text, path);
}

/** The topic-level configs a spec owns, by Kafka name: what `apply` sets and compares. */
export function desiredConfigs(topic: TopicSpec): Record<string, string> {
  return { "cleanup.policy": topic.cleanupPolicy, "retention.ms": String(topic.retentionMs), ...topic.configs };
}
