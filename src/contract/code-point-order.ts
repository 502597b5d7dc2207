/**
 * Orders strings by their UTF-8 bytes, which is Unicode code point order: the one order of every
 * string tie-break (contract revision 3 change 10: the earliest summary by (event_time, fact_id),
 * conflict versions, result keys, slices, alerts), whatever the path (embedded, Kafka, partitioned,
 * on-disk stores, whose keys sort by UTF-8 bytes too). JavaScript's `<` and `sort()` compare UTF-16
 * code units, which put astral characters (surrogate pairs) before U+E000..U+FFFF; this does not.
 */
export function byUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index += 1) {
    const left = a.charCodeAt(index);
    const right = b.charCodeAt(index);
    if (left === right) continue;
    // Only when both are at or above the surrogate range can UTF-16 order differ from code point order.
    if (left >= 0xd800 && right >= 0xd800) return codePointRank(left) - codePointRank(right);
    return left - right;
  }
  return a.length - b.length;
}

/** Surrogates (0xD800..0xDFFF) encode code points above 0xFFFF, so they rank after 0xE000..0xFFFF. */
function codePointRank(unit: number): number {
  return unit >= 0xd800 && unit <= 0xdfff ? unit + 0x10000 : unit;
}
