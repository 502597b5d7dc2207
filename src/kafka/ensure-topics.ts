import type { Admin } from "kafkajs";
import { applyTopicActions, planTopics } from "./topic-admin.ts";
import { loadTopicSpecFile, prefixedTopicName } from "./topic-spec.ts";

/**
 * Creates the topology's topics that are missing (with the prefix, if any) from topics/topics.json.
 * It never alters an existing topic: changing a running deployment's topics is `agentops topics
 * apply`'s job, done deliberately. Returns the names it created.
 */
export async function ensureTopics(admin: Admin, prefix: string): Promise<string[]> {
  const file = await loadTopicSpecFile();
  const specs = file.topics.map((topic) => ({ ...topic, name: prefixedTopicName(prefix, topic.name) }));
  const creations = (await planTopics(admin, specs)).filter((action) => action.kind === "create");
  await applyTopicActions(admin, creations);
  return creations.map((action) => action.topic.name);
}
