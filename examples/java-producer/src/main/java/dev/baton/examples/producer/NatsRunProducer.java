package dev.baton.examples.producer;

import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.PublishOptions;
import io.nats.client.api.PublishAck;
import java.io.IOException;
import java.time.Duration;
import java.util.regex.Pattern;

/**
 * Run messages on NATS JetStream (docs/wire-protocol.md, "NATS JetStream"): published with
 * JetStream to {@code <prefix>.runs} (or the lane {@code <prefix>.runs.high} / {@code .low}),
 * with {@code Nats-Msg-Id} set to the de-duplication id on starts and signals. A send returns on
 * the stream's PubAck; a duplicate PubAck (the stream already held that id) is success too.
 */
public final class NatsRunProducer implements RunProducer {
  /** The transport's prefixes: lower case, one subject token (stream names are it upper-cased). */
  private static final Pattern PREFIX = Pattern.compile("[a-z][a-z0-9_-]{0,47}");

  private final Connection connection;
  private final JetStream jetStream;
  private final String prefix;

  public NatsRunProducer(String servers, String prefix) throws IOException, InterruptedException {
    if (!PREFIX.matcher(prefix).matches()) {
      throw new IllegalArgumentException(
          "NATS prefix '" + prefix + "' must be 1-48 characters from lower-case letters, digits, '_' and '-', starting with a letter");
    }
    this.prefix = prefix;
    Options options = Options.builder()
        .servers(servers.split(","))
        .connectionName("baton-java-producer")
        .connectionTimeout(Duration.ofSeconds(5))
        .maxReconnects(5)
        .build();
    this.connection = Nats.connect(options);
    this.jetStream = connection.jetStream();
  }

  /** The subject of the lane: {@code <prefix>.runs}, or {@code <prefix>.runs.<priority>}. */
  String subjectOf(RunMessages.Outgoing message) {
    return prefix + ".runs" + (message.priority() == null ? "" : "." + message.priority());
  }

  @Override
  public Sent send(RunMessages.Outgoing message) throws IOException, JetStreamApiException {
    String subject = subjectOf(message);
    PublishOptions.Builder options = PublishOptions.builder().streamTimeout(Duration.ofSeconds(5));
    if (message.dedupId() != null) options.messageId(message.dedupId());
    PublishAck ack;
    try {
      ack = jetStream.publish(subject, message.body(), options.build());
    } catch (IOException e) {
      // No stream on the subject answers "no responders": nothing has set this prefix up.
      throw new IOException(
          "publishing to " + subject + " failed (" + e.getMessage() + "): is a Baton worker running with "
              + "BATON_NATS_PREFIX=" + prefix + (message.priority() == null ? "" : " and BATON_NATS_PRIORITY_LANES=true")
              + "? The workers create the streams; a producer only publishes",
          e);
    }
    return new Sent(message.kind(), message.runId(), subject, ack.isDuplicate(), null, ack.getSeqno());
  }

  @Override
  public void close() throws InterruptedException {
    connection.close();
  }
}
