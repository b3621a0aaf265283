package dev.baton.examples.producer;

/**
 * Puts run messages on one bus, as docs/wire-protocol.md places them there ("On each bus"). A
 * send returns once the bus holds the message durably; sending the same message again (after an
 * error or a timeout) is always safe, since its run id and de-duplication id are the same.
 */
public interface RunProducer extends AutoCloseable {
  /** Where one message went: the bus's answer, for the caller to print. */
  record Sent(String kind, String runId, String destination, boolean duplicate, Integer partition, Long position) {}

  Sent send(RunMessages.Outgoing message) throws Exception;

  @Override
  void close() throws Exception;
}
