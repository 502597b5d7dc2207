import { readFileSync } from "node:fs";
import { ConfigError } from "../../../src/errors.ts";
import { describe, expect, it } from "vitest";
import { DEFAULT_TOPICS_FILE, parseTopicSpecFile } from "../../../src/kafka/topic-spec.ts";
import { topicNames, topicNamesFrom } from "../../../src/stream/topic-names.ts";

const shipped = parseTopicSpecFile(readFileSync(DEFAULT_TOPICS_FILE, "utf8"), DEFAULT_TOPICS_FILE);

describe("topic names come from topics/topics.json", () => {
  it("names every role after the topic that carries it, with the prefix in front", () => {
    const names = topicNames("t1");
    for (const topic of shipped.topics) {
      expect(topic.role, `${topic.name} has a role`).toBeDefined();
      expect(names[topic.role as keyof typeof names]).toBe(`t1.${topic.name}`);
    }
    expect(Object.keys(names).sort()).toEqual(shipped.topics.map((topic) => topic.role).sort());
  });

  it("follows a renamed topic in the file", () => {
    const renamed = {
      ...shipped,
      topics: shipped.topics.map((topic) => (topic.role === "results" ? { ...topic, name: "acme.results.v9" } : topic)),
    };
    expect(topicNamesFrom(renamed).results).toBe("acme.results.v9");
  });

  it("refuses a file that lacks a role the topology needs", () => {
    const without = { ...shipped, topics: shipped.topics.filter((topic) => topic.role !== "engineFacts") };
    expect(() => topicNamesFrom(without)).toThrow(/"role": "engineFacts"/);
    // A configuration error names the file and the fix, which the CLI prints as they are.
    expect(() => topicNamesFrom(without)).toThrow(ConfigError);
    expect(() => topicNamesFrom(without)).toThrow(/^topics\/topics.json: .*Fix: /);
  });

  it("refuses two topics with one role", () => {
    const doubled = { topics: [...shipped.topics, { ...shipped.topics[0], name: "another.facts" }] };
    expect(() => parseTopicSpecFile(JSON.stringify(doubled), "inline")).toThrow(/duplicate role "facts"/);
  });
});
