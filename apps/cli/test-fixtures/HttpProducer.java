/*
 * A Baton producer in Java, with nothing but the JDK (java.net.http): starts a run of `api_greet`
 * over the HTTP API and waits for its outcome with the result long poll. Run as a single source
 * file (JDK 11+):
 *
 *   java HttpProducer.java <base url> <token> <idempotency key> <name>
 *
 * Prints `started <runId> <HTTP status>` then `outcome <JSON>`; exits 1 with the answer on
 * standard error for anything else. apps/cli/src/http-api.serial.int.spec.ts runs it against `baton serve`.
 */
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class HttpProducer {
  private static final Pattern RUN_ID = Pattern.compile("\"runId\"\\s*:\\s*\"([^\"]+)\"");

  public static void main(String[] args) throws Exception {
    if (args.length != 4) fail("usage: java HttpProducer.java <base url> <token> <idempotency key> <name>");
    String base = args[0].endsWith("/") ? args[0] : args[0] + "/";
    String token = args[1];
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    String body = "{\"workflow\":\"api_greet\",\"input\":{\"name\":" + quoted(args[3]) + "},"
        + "\"idempotencyKey\":" + quoted(args[2]) + "}";
    HttpRequest start = HttpRequest.newBuilder(URI.create(base + "v1/runs"))
        .header("Authorization", "Bearer " + token)
        .header("Content-Type", "application/json")
        .timeout(Duration.ofSeconds(30))
        .POST(HttpRequest.BodyPublishers.ofString(body))
        .build();
    HttpResponse<String> started = http.send(start, HttpResponse.BodyHandlers.ofString());
    if (started.statusCode() != 201 && started.statusCode() != 200)
      fail("start answered " + started.statusCode() + ": " + started.body());
    Matcher match = RUN_ID.matcher(started.body());
    if (!match.find()) fail("start answered no runId: " + started.body());
    String runId = match.group(1);
    System.out.println("started " + runId + " " + started.statusCode());

    // 202 means "not finished yet": ask again; each request waits up to 20 s on the server.
    for (int attempt = 0; attempt < 6; attempt++) {
      HttpRequest poll = HttpRequest.newBuilder(URI.create(base + "v1/runs/" + runId + "/result?wait=20s"))
          .header("Authorization", "Bearer " + token)
          .timeout(Duration.ofSeconds(40))
          .GET()
          .build();
      HttpResponse<String> outcome = http.send(poll, HttpResponse.BodyHandlers.ofString());
      if (outcome.statusCode() == 200) {
        System.out.println("outcome " + outcome.body());
        return;
      }
      if (outcome.statusCode() != 202) fail("result answered " + outcome.statusCode() + ": " + outcome.body());
    }
    fail("run " + runId + " did not finish in 2 minutes");
  }

  /** A JSON string literal of `text`. */
  private static String quoted(String text) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      if (c == '"' || c == '\\') out.append('\\').append(c);
      else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
      else out.append(c);
    }
    return out.append('"').toString();
  }

  private static void fail(String message) {
    System.err.println(message);
    System.exit(1);
  }
}
