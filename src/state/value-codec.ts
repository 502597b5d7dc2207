/** How a table's values are stored on disk. */
export interface ValueCodec<V> {
  encode(value: V): Buffer;
  decode(bytes: Buffer): V;
  /** Called once a commit's writes are all encoded: a codec may reuse encodings within one commit, not across. */
  committed?(): void;
}
