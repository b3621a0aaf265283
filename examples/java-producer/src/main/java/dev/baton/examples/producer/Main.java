package dev.baton.examples.producer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The command line: one bus, then any number of commands, sent in order over one connection.
 *
 * <pre>
 * java -jar baton-java-producer.jar (nats|kafka) SERVERS PREFIX COMMAND...
 *   start WORKFLOW VERSION INPUT-JSON [--key KEY] [--run-id ID] [--priority high|low]
 *   signal RUN-ID NAME PAYLOAD-JSON [--signal-id ID]
 *   cancel RUN-ID REASON
 * </pre>
 *
 * Each command prints one JSON line: what it sent and the bus's answer. Exit code 2 for a mistake
 * on the command line (nothing is sent from the first one on), 1 when a send failed.
 */
public final class Main {
  private Main() {}

  private static final String USAGE = String.join("\n",
      "usage: java -jar baton-java-producer.jar (nats|kafka) SERVERS PREFIX COMMAND...",
      "  start WORKFLOW VERSION INPUT-JSON [--key KEY] [--run-id ID] [--priority high|low]",
      "  signal RUN-ID NAME PAYLOAD-JSON [--signal-id ID]",
      "  cancel RUN-ID REASON",
      "e.g. nats nats://127.0.0.1:4222 baton start greet 1 '{\"name\":\"Ada\"}' --key order-42");

  public static void main(String[] args) {
    List<RunMessages.Outgoing> messages;
    try {
      if (args.length < 4) throw new IllegalArgumentException("a bus, its servers, a prefix and a command are needed");
      if (!args[0].equals("nats") && !args[0].equals("kafka")) {
        throw new IllegalArgumentException("the bus must be 'nats' or 'kafka'; found '" + args[0] + "'");
      }
      messages = parseCommands(args, 3);
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
      return;
    }
    try (RunProducer producer = args[0].equals("nats")
        ? new NatsRunProducer(args[1], args[2])
        : new KafkaRunProducer(args[1], args[2])) {
      for (RunMessages.Outgoing message : messages) System.out.println(Json.write(report(producer.send(message))));
    } catch (Exception e) {
      System.err.println("error: " + e.getMessage());
      System.exit(1);
    }
  }

  /** Every command from {@code args[from]} on, built and checked before anything is sent. */
  static List<RunMessages.Outgoing> parseCommands(String[] args, int from) {
    List<RunMessages.Outgoing> messages = new ArrayList<>();
    int at = from;
    while (at < args.length) {
      String command = args[at];
      int positional = switch (command) {
        case "start", "signal" -> 3;
        case "cancel" -> 2;
        default -> throw new IllegalArgumentException("unknown command '" + command + "'");
      };
      if (at + positional >= args.length) throw new IllegalArgumentException(command + " needs " + positional + " arguments");
      String[] values = java.util.Arrays.copyOfRange(args, at + 1, at + 1 + positional);
      at += 1 + positional;
      Map<String, String> flags = new LinkedHashMap<>();
      while (at < args.length && args[at].startsWith("--")) {
        if (at + 1 >= args.length) throw new IllegalArgumentException(args[at] + " needs a value");
        flags.put(args[at], args[at + 1]);
        at += 2;
      }
      messages.add(build(command, values, flags));
    }
    return messages;
  }

  private static RunMessages.Outgoing build(String command, String[] values, Map<String, String> flags) {
    switch (command) {
      case "start" -> {
        onlyFlags(command, flags, "--key", "--run-id", "--priority");
        int version;
        try {
          version = Integer.parseInt(values[1]);
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("version must be a positive integer; found '" + values[1] + "'");
        }
        return RunMessages.start(values[0], version, Json.parse(values[2]), flags.get("--key"), flags.get("--run-id"),
            flags.get("--priority"));
      }
      case "signal" -> {
        onlyFlags(command, flags, "--signal-id");
        return RunMessages.signal(values[0], values[1], Json.parse(values[2]), flags.get("--signal-id"));
      }
      default -> {
        onlyFlags(command, flags);
        return RunMessages.cancel(values[0], values[1]);
      }
    }
  }

  private static void onlyFlags(String command, Map<String, String> flags, String... allowed) {
    for (String flag : flags.keySet()) {
      if (!List.of(allowed).contains(flag)) {
        throw new IllegalArgumentException(command + " does not take " + flag + (allowed.length == 0 ? "" : "; it takes " + String.join(", ", allowed)));
      }
    }
  }

  private static Map<String, Object> report(RunProducer.Sent sent) {
    Map<String, Object> line = new LinkedHashMap<>();
    line.put("kind", sent.kind());
    line.put("runId", sent.runId());
    line.put("to", sent.destination());
    line.put("duplicate", sent.duplicate());
    if (sent.partition() != null) line.put("partition", sent.partition());
    if (sent.position() != null) line.put("position", sent.position());
    return line;
  }
}
