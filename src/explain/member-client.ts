import type { ExplainAnswer, ExplainQuery } from "../lineage/query.ts";
import { queryParams } from "../lineage/query.ts";

/** How many times a query waits for a member that is catching up (503) before giving up. */
const RETRIES = 10;
const RETRY_MILLIS = 500;

/**
 * Asks a running member (its telemetry port) to explain a figure. A member that does not hold the
 * engine's partition redirects (307) to the member that does, and fetch follows it; a member
 * catching up (facts not yet flushed) answers 503 and is asked again a little later.
 */
export async function queryMember(base: string, query: ExplainQuery): Promise<ExplainAnswer> {
  const url = new URL(`/explain?${queryParams(query).toString()}`, base);
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(url, { redirect: "follow", signal: AbortSignal.timeout(60_000) });
    const body = await response.text();
    if (response.status === 200 || response.status === 404) return JSON.parse(body) as ExplainAnswer;
    if (response.status !== 503 || attempt >= RETRIES)
      throw new Error(`${url.origin} answered ${response.status}: ${body}`);
    await new Promise((resolve) => setTimeout(resolve, RETRY_MILLIS));
  }
}

/** The live view's lineage route over a member: a figure's explanation by its result key, as JSON. */
export function memberExplainer(
  member: string,
): (key: string) => Promise<{ readonly status: number; readonly body: string }> {
  return async (key) => {
    const answered = await queryMember(member, { key });
    return { status: answered.kind === "explained" ? 200 : 404, body: JSON.stringify(answered) };
  };
}
