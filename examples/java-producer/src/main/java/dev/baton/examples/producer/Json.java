package dev.baton.examples.producer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Just enough JSON for this example, since the JDK has none: {@link #parse} reads the inputs and
 * payloads given on the command line (so a malformed one is refused here, never sent), and
 * {@link #write} writes a message. Objects are {@code Map<String, Object>}, arrays {@code List},
 * numbers {@link Number} or {@link Json.Literal} (a number read from text, written back exactly as
 * it was), plus String, Boolean and null. A real producer would use its JSON library instead.
 */
public final class Json {
  private Json() {}

  /** A number as it was written, so that it is sent back unchanged (no rounding through double). */
  public record Literal(String text) {}

  /** The JSON text of {@code value}. */
  public static String write(Object value) {
    StringBuilder out = new StringBuilder();
    write(value, out);
    return out.toString();
  }

  private static void write(Object value, StringBuilder out) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof String s) {
      writeString(s, out);
    } else if (value instanceof Boolean || value instanceof Integer || value instanceof Long) {
      out.append(value);
    } else if (value instanceof Literal literal) {
      out.append(literal.text());
    } else if (value instanceof Double d && Double.isFinite(d)) {
      out.append(d);
    } else if (value instanceof Map<?, ?> map) {
      out.append('{');
      String separator = "";
      for (Map.Entry<?, ?> entry : map.entrySet()) {
        out.append(separator);
        writeString(String.valueOf(entry.getKey()), out);
        out.append(':');
        write(entry.getValue(), out);
        separator = ",";
      }
      out.append('}');
    } else if (value instanceof List<?> list) {
      out.append('[');
      String separator = "";
      for (Object item : list) {
        out.append(separator);
        write(item, out);
        separator = ",";
      }
      out.append(']');
    } else {
      throw new IllegalArgumentException("no JSON form for a " + value.getClass().getSimpleName() + ": " + value);
    }
  }

  private static void writeString(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
          else out.append(c);
        }
      }
    }
    out.append('"');
  }

  /** Reads one JSON value; IllegalArgumentException naming the position of the first mistake. */
  public static Object parse(String text) {
    Parser parser = new Parser(text);
    parser.skipSpace();
    Object value = parser.value();
    parser.skipSpace();
    if (parser.at < text.length()) throw parser.error("unexpected text after the value");
    return value;
  }

  private static final class Parser {
    private final String text;
    private int at;

    Parser(String text) {
      this.text = text;
    }

    IllegalArgumentException error(String what) {
      return new IllegalArgumentException("not JSON: " + what + " at character " + at + " of " + text);
    }

    void skipSpace() {
      while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) at++;
    }

    char peek() {
      if (at >= text.length()) throw error("unexpected end");
      return text.charAt(at);
    }

    void expect(char c) {
      if (peek() != c) throw error("expected '" + c + "'");
      at++;
    }

    Object value() {
      char c = peek();
      if (c == '{') return object();
      if (c == '[') return array();
      if (c == '"') return string();
      if (c == '-' || (c >= '0' && c <= '9')) return number();
      for (String word : new String[] {"true", "false", "null"}) {
        if (text.startsWith(word, at)) {
          at += word.length();
          return word.equals("null") ? null : Boolean.valueOf(word);
        }
      }
      throw error("unexpected '" + c + "'");
    }

    Map<String, Object> object() {
      expect('{');
      Map<String, Object> map = new LinkedHashMap<>();
      skipSpace();
      if (peek() == '}') {
        at++;
        return map;
      }
      while (true) {
        skipSpace();
        String key = string();
        skipSpace();
        expect(':');
        skipSpace();
        map.put(key, value());
        skipSpace();
        if (peek() == ',') {
          at++;
          continue;
        }
        expect('}');
        return map;
      }
    }

    List<Object> array() {
      expect('[');
      List<Object> list = new ArrayList<>();
      skipSpace();
      if (peek() == ']') {
        at++;
        return list;
      }
      while (true) {
        skipSpace();
        list.add(value());
        skipSpace();
        if (peek() == ',') {
          at++;
          continue;
        }
        expect(']');
        return list;
      }
    }

    String string() {
      expect('"');
      StringBuilder out = new StringBuilder();
      while (true) {
        char c = peek();
        at++;
        if (c == '"') return out.toString();
        if (c < 0x20) throw error("a control character in a string");
        if (c != '\\') {
          out.append(c);
          continue;
        }
        char escaped = peek();
        at++;
        switch (escaped) {
          case '"', '\\', '/' -> out.append(escaped);
          case 'b' -> out.append('\b');
          case 'f' -> out.append('\f');
          case 'n' -> out.append('\n');
          case 'r' -> out.append('\r');
          case 't' -> out.append('\t');
          case 'u' -> {
            if (at + 4 > text.length()) throw error("a short \\u escape");
            try {
              out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
            } catch (NumberFormatException e) {
              throw error("a bad \\u escape");
            }
            at += 4;
          }
          default -> throw error("a bad escape \\" + escaped);
        }
      }
    }

    Literal number() {
      int start = at;
      if (peek() == '-') at++;
      if (peek() == '0') at++;
      else digits();
      if (at < text.length() && text.charAt(at) == '.') {
        at++;
        digits();
      }
      if (at < text.length() && (text.charAt(at) == 'e' || text.charAt(at) == 'E')) {
        at++;
        if (peek() == '+' || peek() == '-') at++;
        digits();
      }
      return new Literal(text.substring(start, at));
    }

    void digits() {
      int start = at;
      while (at < text.length() && text.charAt(at) >= '0' && text.charAt(at) <= '9') at++;
      if (at == start) throw error("expected a digit");
    }
  }
}
