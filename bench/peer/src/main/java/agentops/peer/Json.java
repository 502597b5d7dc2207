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

  /** A double as a JSON number; integral values without a fraction, as JavaScript writes them. */
  static void number(StringBuilder out, double value) {
    if (value == Math.rint(value) && Math.abs(value) < 1e15) out.append((long) value);
    else out.append(value);
  }
}
