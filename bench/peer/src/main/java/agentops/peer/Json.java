package agentops.peer;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/** JSON text as JavaScript's JSON.stringify writes it (the result keys are compared byte for byte). */
final class Json {
  private static final DateTimeFormatter ISO_MILLIS = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  private Json() {}

  /** Date.prototype.toISOString for years 0000–9999. */
  static String timestamp(long epochMillis) {
    return ISO_MILLIS.format(Instant.ofEpochMilli(epochMillis));
  }

  static void string(StringBuilder out, String text) {
    out.append('"');
    for (int index = 0; index < text.length(); index++) {
      char c = text.charAt(index);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          boolean loneSurrogate = Character.isSurrogate(c) && !(Character.isHighSurrogate(c) && index + 1 < text.length() && Character.isLowSurrogate(text.charAt(index + 1)))
              && !(Character.isLowSurrogate(c) && index > 0 && Character.isHighSurrogate(text.charAt(index - 1)));
          if (c < 0x20 || loneSurrogate) out.append(String.format("\\u%04x", (int) c));
          else out.append(c);
        }
      }
    }
    out.append('"');
  }

  /** Code point order (src/contract/code-point-order.ts byUtf8), not String.compareTo's UTF-16 order. */
  static int compareCodePoints(String a, String b) {
    int length = Math.min(a.length(), b.length());
    for (int index = 0; index < length; index++) {
      char left = a.charAt(index);
      char right = b.charAt(index);
      if (left == right) continue;
      if (left >= 0xd800 && right >= 0xd800) return rank(left) - rank(right);
      return left - right;
    }
    return a.length() - b.length();
  }

  /** Surrogates encode code points above U+FFFF, so they rank after U+E000..U+FFFF. */
  private static int rank(char unit) {
    return Character.isSurrogate(unit) ? unit + 0x10000 : unit;
  }

  /** A double as a JSON number; integral values without a fraction, as JavaScript writes them. */
  static void number(StringBuilder out, double value) {
    if (value == Math.rint(value) && Math.abs(value) < 1e15) out.append((long) value);
    else out.append(value);
  }
}
