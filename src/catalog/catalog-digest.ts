import { createHash } from "node:crypto";
import canonicalize from "canonicalize";

/**
 * The semantic digest of a catalog document: "sha256:" + hex SHA-256 over its RFC 8785 (JCS)
 * canonical JSON. Whitespace, key order and number spelling in the file do not change it; any
 * change of a value does.
 */
export function catalogDigest(document: unknown): string {
  const canonical = canonicalize(document);
  if (canonical === undefined) throw new TypeError("the catalog document has no canonical JSON form");
  return `sha256:${createHash("sha256").update(canonical, "utf8").digest("hex")}`;
}
