import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadShippedTopicSpecFile } from "../../../src/kafka/topic-spec.ts";
import { topicNames } from "../../../src/stream/topic-names.ts";
import { describeTopology, ALL_PROCESSORS, TOPOLOGY } from "../../../src/stream/topology.ts";

const ARCHITECTURE = new URL("../../../docs/architecture.md", import.meta.url);

describe("the topology (src/stream/topology.ts)", () => {
  it("is the picture docs/architecture.md shows", () => {
    const text = readFileSync(ARCHITECTURE, "utf8");
    const block = /<!-- topology:begin[^>]*-->\n```text\n([\s\S]*?)\n```\n<!-- topology:end -->/.exec(text);
    expect(block, "docs/architecture.md has a topology block").not.toBeNull();
    const generated = describeTopology(topicNames());
    expect(block?.[1], `docs/architecture.md's topology block must read:\n${generated}`).toBe(generated);
  });

  it("reads and writes only topics of topics/topics.json, and every such topic is part of it", () => {
    const roles = new Set(loadShippedTopicSpecFile().topics.map((topic) => topic.role));
    const used = new Set<string>();
    for (const name of ALL_PROCESSORS) {
      const node = TOPOLOGY[name];
      for (const role of [
        node.source,
        ...node.sinks.map((sink) => sink.topic),
        ...node.stores.map((store) => store.changelog),
      ])
        used.add(role);
    }
    for (const role of used) expect(roles.has(role), role).toBe(true);
    expect([...roles].filter((role) => role !== undefined && !used.has(role))).toEqual([]);
  });

  it("restores every store from a topic its processor owns (its source or one of its sinks)", () => {
    for (const name of ALL_PROCESSORS) {
      const node = TOPOLOGY[name];
      for (const store of node.stores)
        expect([node.source, ...node.sinks.map((sink) => sink.topic)], `${name}/${store.name}`).toContain(
          store.changelog,
        );
    }
  });
});
