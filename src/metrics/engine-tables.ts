import type { LedgerTables } from "./fact-ledger.ts";
import type { IndexTables } from "./fact-index.ts";
import type { PublishedTables } from "./result-publisher.ts";
import { MemoryLinkTable, MemoryTable, type LinkTable, type Table } from "./tables.ts";
import type { UnitTables } from "./unit-tables.ts";

/** Every table of the single engine, by the part that keeps it. The state room lays them out on disk. */
export interface EngineTables {
  readonly ledger: LedgerTables;
  readonly units: UnitTables;
  readonly published: PublishedTables;
}

const table = <V>(): Table<V> => new MemoryTable<V>();
const links = <V>(): LinkTable<V> => new MemoryLinkTable<V>();

function memoryIndexTables(): IndexTables {
  return {
    callDocs: table(),
    deliveryDocs: table(),
    taskIdDocs: table(),
    packetDocs: table(),
    snapshotDocs: table(),
    callCosts: links(),
    deliverySummaries: links(),
    deliveryCosts: links(),
    deliveryCalls: links(),
    deliveryRepairs: links(),
    deliveryReaders: links(),
    taskIdCalls: links(),
    taskIdRepairs: links(),
    taskIdReaders: links(),
    packetRepairs: links(),
  };
}

/** The whole state in plain maps (a replay of a file, tests): nothing is committed, so no changelog of changed units is kept. */
export function memoryEngineTables(): EngineTables {
  return {
    ledger: { versions: table(), claims: table() },
    units: {
      index: memoryIndexTables(),
      taskUnits: table(),
      groups: table(),
      asOfTimes: links(),
      changedUnits: undefined,
      beforeCommit: () => undefined,
      groupMade: () => undefined,
    },
    published: { keys: table(), records: table() },
  };
}
