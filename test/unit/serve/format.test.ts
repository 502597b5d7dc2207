import { describe, expect, it } from "vitest";

// The page's time module is plain browser JavaScript; it is loaded here by URL, as the page loads it.
const FORMAT_MODULE = new URL("../../../src/serve/static/format.js", import.meta.url).href;
const { formatInstant, instantMillis } = (await import(FORMAT_MODULE)) as {
  formatInstant(value: unknown): string;
  instantMillis(value: unknown): number | null;
};

describe("the page's one time function", () => {
  it("reads RFC 3339 text and epoch milliseconds alike (alerts move from the second to the first)", () => {
    const epoch = 1_790_814_306_344;
    expect(formatInstant(epoch)).toBe("2026-10-01 00:25:06.344Z");
    expect(formatInstant("2026-10-01T00:25:06.344Z")).toBe(formatInstant(epoch));
    expect(formatInstant("2026-10-01T00:00:00.000Z")).toBe("2026-10-01 00:00:00Z");
    expect(instantMillis("2026-10-01T00:25:06.344Z")).toBe(epoch);
  });

  it("says it does not know rather than showing the epoch's start", () => {
    expect(formatInstant(null)).toBe("—");
    expect(formatInstant("not a time")).toBe("—");
    expect(formatInstant(Number.NaN)).toBe("—");
  });
});
