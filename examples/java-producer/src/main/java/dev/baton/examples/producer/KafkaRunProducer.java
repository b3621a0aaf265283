package dev.baton.examples.producer;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Run messages on Kafka (docs/wire-protocol.md, "Kafka"): records on {@code <prefix>.runs} (or
 * the lane {@code <prefix>.runs.high} / {@code .low}), keyed by run id and placed by the client's
 * default partitioner (murmur2 of the key, as the workers compute it), with the header
 * {@code baton-msg-id} on starts and signals. acks=all and the idempotent producer; a send returns
 * once the brokers acknowledged the record.
 */
public final class KafkaRunProducer implements RunProducer {
  /** The transport's prefixes. */
  private static final Pattern PREFIX = Pattern.compile("[a-zA-Z0-9][a-zA-Z0-9_-]{0,99}");
  /** The header carrying the de-duplication id. */
  static final String MSG_ID_HEADER = "baton-msg-id";

  private final KafkaProducer<String, byte[]> producer;
  private final String prefix;
  /** Topics found to exist: the first send to each checks it, so a missing one is named. */
  private final Set<String> checked = new HashSet<>();

  public KafkaRunProducer(String bootstrapServers, String prefix) {
    if (!PREFIX.matcher(prefix).matches()) {
      throw new IllegalArgumentException(
          "Kafka prefix '" + prefix + "' must be 1-100 characters from letters, digits, '_' and '-', starting with a letter or digit");
    }
    this.prefix = prefix;
    Properties config = new Properties();
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers.replace("kafka://", ""));
    config.put(ProducerConfig.CLIENT_ID_CONFIG, "baton-java-producer");
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    // How long a send may wait for the topic's metadata: a missing topic fails after this.
    config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 15_000);
    config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
    config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    this.producer = new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer());
  }

  /** The topic of the lane: {@code <prefix>.runs}, or {@code <prefix>.runs.<priority>}. */
  String topicOf(RunMessages.Outgoing message) {
    return prefix + ".runs" + (message.priority() == null ? "" : "." + message.priority());
  }

  @Override
  public Sent send(RunMessages.Outgoing message) throws ExecutionException, InterruptedException {
    String topic = topicOf(message);
    requireTopic(topic, message);
    List<Header> headers = message.dedupId() == null
        ? List.of()
        : List.of(new RecordHeader(MSG_ID_HEADER, message.dedupId().getBytes(StandardCharsets.UTF_8)));
    // No partition given: the default partitioner places a keyed record by murmur2 of its key.
    ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, null, message.runId(), message.body(), headers);
    RecordMetadata metadata = producer.send(record).get();
    return new Sent(message.kind(), message.runId(), topic, false, metadata.partition(), metadata.offset());
  }

  /** The workers create the topics; a producer must not (nor let the broker create one for it). */
  private void requireTopic(String topic, RunMessages.Outgoing message) {
    if (checked.contains(topic)) return;
    try {
      producer.partitionsFor(topic);
    } catch (TimeoutException e) {
      throw new IllegalStateException(
          "topic " + topic + " was not found: is a Baton worker running with BATON_KAFKA_PREFIX=" + prefix
              + (message.priority() == null ? "" : " and BATON_KAFKA_PRIORITY_LANES=true")
              + "? The workers create the topics; a producer only sends",
          e);
    }
    checked.add(topic);
  }

  @Override
  public void close() {
    producer.close();
  }
}
