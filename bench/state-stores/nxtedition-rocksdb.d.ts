/** The part of @nxtedition/rocksdb (which ships no types) that the state-store benchmark uses. */
declare module "@nxtedition/rocksdb" {
  export class RocksLevel {
    constructor(location: string, options: { keyEncoding: "utf8"; valueEncoding: "buffer" });
    open(): Promise<void>;
    batch(): { put(key: string, value: Buffer): void; del(key: string): void; write(): Promise<void> };
    close(): Promise<void>;
  }
}
