import { describe, expect, it } from "vitest";
import { LISTED_MISMATCHES, MismatchList } from "../../../src/stream/audit/mismatch-list.ts";

describe("the audit's mismatch list", () => {
  it("counts every mismatch but keeps only the first ones, in the order found", () => {
    const list = new MismatchList();
    const total = LISTED_MISMATCHES + 500;
    for (let offset = 0; offset < total; offset += 1)
      list.add({ position: { topic: "engine-facts", partition: 0, offset: String(offset) }, detail: "bad" });
    expect(list.count).toBe(total);
    expect(list.listed).toHaveLength(LISTED_MISMATCHES);
    expect(list.listed[0]?.position.offset).toBe("0");
    expect(list.listed.at(-1)?.position.offset).toBe(String(LISTED_MISMATCHES - 1));
  });
});
