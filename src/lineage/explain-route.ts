import type { EngineDirectory } from "./engine-directory.ts";
import { answer, queryOf } from "./query.ts";

/** An HTTP answer: status, headers and a JSON body. */
export interface RouteReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface ExplainRouting {
  readonly directory: EngineDirectory;
  /** The single engine is one partition (docs/architecture.md): the one explanations read. */
  readonly partition: number;
  /** The address the member owning the partition advertises (undefined: none now). */
  readonly ownerAddress: () => Promise<string | undefined>;
  /** This member's own advertised address (a redirect never points back at it). */
  readonly selfAddress: string;
  /** The partitioned engine keeps no unit contributions in one place: its figures are not explained. */
  readonly partitioned: boolean;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): RouteReply => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});

/**
 * `GET /explain?metric=…&scope=…&cohort=k=v` (or `?key=…`): the explanation from this member's
 * engine state when it holds the engine's partition (404 with the matching keys when the query
 * names none or several figures; 503 while facts wait for a flush); otherwise a 307 to the member
 * that owns the partition, found in the engine's consumer group (Kafka Streams' interactive
 * queries); 503 when no member owns it now (a rebalance).
 */
export async function explainRoute(url: URL, routing: ExplainRouting): Promise<RouteReply> {
  if (routing.partitioned)
    return json(501, {
      error:
        "explanations read the single engine's state; --engine stages keeps no unit contributions in one place. " +
        "Explain from the audit rebuild instead: agentops explain <metric | key> --from-topic --engine stages",
    });
  const query = queryOf(url.searchParams);
  if (typeof query === "string") return json(400, { error: query });
  const lineage = routing.directory.lineage(routing.partition);
  if (lineage !== undefined) {
    if (!lineage.settled)
      return json(503, { error: "the engine has facts not yet flushed; ask again" }, { "retry-after": "1" });
    const answered = answer(lineage, query);
    return json(answered.kind === "explained" ? 200 : 404, answered);
  }
  const owner = await routing.ownerAddress();
  if (owner === undefined || owner === routing.selfAddress)
    return json(
      503,
      { error: "no member holds the engine's partition now (a rebalance, or no engine role running); ask again" },
      { "retry-after": "1" },
    );
  return { status: 307, headers: { location: `${owner}/explain${url.search}` }, body: "" };
}
