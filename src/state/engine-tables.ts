import type { Cost, DeliverySummary, Repair } from "../contract/facts.ts";
import type { EngineTables } from "../metrics/engine-tables.ts";
import type { IndexTables } from "../metrics/fact-index.ts";
import type { LedgerTables } from "../metrics/fact-ledger.ts";
import type { PublishedTables } from "../metrics/result-publisher.ts";
import type { UnitTables } from "../metrics/unit-tables.ts";
import { contributionsCodec, groupCodec } from "./codecs/contributions.ts";
import { storedContributions } from "./codecs/stored-contributions.ts";
import {
  callDocCodec,
  deliveryDocCodec,
  packetDocCodec,
  snapshotDocCodec,
  taskIdDocCodec,
  taskReaderCodec,
} from "./codecs/entity-docs.ts";
import {
  factCodec,
  presenceCodec,
  stringCodec,
  stringListCodec,
  timeCountsCodec,
  versionsCodec,
} from "./codecs/values.ts";
import { GroupKeyIds } from "./group-key-ids.ts";
import type { StateStore } from "./state-store.ts";
import type { ValueCodec } from "./value-codec.ts";

/*
 * The engine's tables in a state store: each table's prefix and codec, the on-disk layout that
 * STATE_LAYOUT_VERSION (local-state.ts) names. A store without a backend gives plain maps.
 */

export function ledgerTables(store: StateStore): LedgerTables {
  return { versions: store.table("lf\u0000", versionsCodec), claims: store.table("ld\u0000", stringListCodec) };
}

function indexTables(store: StateStore, ids: GroupKeyIds): IndexTables {
  // A list's members are facts of its one type: the codec reads back what was written.
  const facts = factCodec as ValueCodec<never>;
  return {
    callDocs: store.table("ec\u0000", callDocCodec(ids)),
    deliveryDocs: store.table("ed\u0000", deliveryDocCodec(ids)),
    taskIdDocs: store.table("et\u0000", taskIdDocCodec),
    packetDocs: store.table("ep\u0000", packetDocCodec(ids)),
    snapshotDocs: store.table("es\u0000", snapshotDocCodec(ids)),
    callCosts: store.links<Cost>("xcc\u0000", facts),
    deliverySummaries: store.links<DeliverySummary>("xds\u0000", facts),
    deliveryCosts: store.links<Cost>("xdc\u0000", facts),
    deliveryCalls: store.links("xdk\u0000", stringCodec),
    deliveryRepairs: store.links<Repair>("xdr\u0000", facts),
    deliveryReaders: store.links("xdt\u0000", taskReaderCodec),
    taskIdCalls: store.links("xtk\u0000", stringCodec),
    taskIdRepairs: store.links<Repair>("xtr\u0000", facts),
    taskIdReaders: store.links("xtt\u0000", taskReaderCodec),
    packetRepairs: store.links<Repair>("xpr\u0000", facts),
  };
}

/**
 * The unit state's tables. `changelog`: keep the units whose contributions changed (on disk only),
 * for the single engine's contributions changelog; the partitioned stages have none to feed.
 */
export function unitTables(store: StateStore, { changelog }: { readonly changelog: boolean }): UnitTables {
  const ids = new GroupKeyIds(store);
  const index = indexTables(store, ids);
  const taskUnits = store.table("ut\u0000", contributionsCodec(ids));
  const groups = store.table("g\u0000", groupCodec());
  const asOfTimes = store.links("ga\u0000", timeCountsCodec);
  const changedUnits = changelog && store.persistent ? store.table("cu\u0000", presenceCodec) : undefined;
  return {
    index,
    taskUnits,
    groups,
    asOfTimes,
    changedUnits,
    beforeCommit: (prepare) => store.beforeCommit(prepare),
    // Only a store on disk encodes contributions, so only it needs their groups' ids.
    groupMade: store.persistent ? (groupKey) => ids.assign(groupKey) : () => undefined,
    ...(store.persistent ? { storedContributions: storedContributions(ids) } : {}),
  };
}

export function publishedTables(store: StateStore): PublishedTables {
  return { keys: store.table("pk\u0000", stringListCodec), records: store.table("pr\u0000", stringCodec) };
}

/** The single engine's tables, in the store the Kafka member or replay keeps on disk. */
export function engineTables(store: StateStore): EngineTables {
  const ledger = ledgerTables(store);
  const units = unitTables(store, { changelog: true });
  return { ledger, units, published: publishedTables(store) };
}
