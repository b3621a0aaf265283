package dev.baton.examples.producer;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Baton's run messages as docs/wire-protocol.md describes them (wire protocol 1), for any bus: the
 * body of a start, signal or cancel, its run id, and the de-duplication id it travels with. Each
 * field is checked here as the workers check it, so a message they would dead-letter is refused
 * before it is sent, with the field named.
 */
public final class RunMessages {
  private RunMessages() {}

  /** Codec version 1: plain JSON values, which is all this producer writes ("The message"). */
  public static final int CODEC_VERSION = 1;

  private static final Pattern RUN_ID = Pattern.compile("[A-Za-z0-9_-]{1,128}");
  private static final Pattern WORKFLOW_NAME = Pattern.compile("[A-Za-z0-9_.:-]{1,128}");

  /** A message ready for a bus: its run (the key), its body, and its de-duplication id or null. */
  public record Outgoing(String kind, String runId, byte[] body, String dedupId, String priority) {}

  /**
   * The run id of a start with an idempotency key ("Run ids"): "k_" and the first 32 characters of
   * the unpadded base64url SHA-256 of the workflow name, a zero byte and the key, all UTF-8. Every
   * producer computes the same, so a start from here and one from Baton's client name one run.
   */
  public static String runIdForKey(String workflow, String idempotencyKey) {
    try {
      MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
      sha256.update(workflow.getBytes(StandardCharsets.UTF_8));
      sha256.update((byte) 0);
      sha256.update(idempotencyKey.getBytes(StandardCharsets.UTF_8));
      String digest = Base64.getUrlEncoder().withoutPadding().encodeToString(sha256.digest());
      return "k_" + digest.substring(0, 32);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("this JDK has no SHA-256", e);
    }
  }

  /**
   * A start. {@code runId} null: derived from the key when there is one, else a random UUID.
   * {@code priority} null for the default lane, else "high" or "low" (the fleet must have lanes).
   */
  public static Outgoing start(
      String workflow, int version, Object input, String idempotencyKey, String runId, String priority) {
    if (workflow == null || !WORKFLOW_NAME.matcher(workflow).matches()) {
      throw refused("workflow", "must be 1-128 characters from letters, digits, '_', '.', ':' and '-'", workflow);
    }
    if (version < 1) throw refused("version", "must be a positive integer", version);
    if (idempotencyKey != null && idempotencyKey.isEmpty()) {
      throw refused("idempotencyKey", "must be a non-empty string when given", idempotencyKey);
    }
    if (priority != null && !priority.equals("high") && !priority.equals("low")) {
      throw refused("priority", "must be 'high' or 'low' (leave it out for 'normal')", priority);
    }
    String derived = idempotencyKey != null ? runIdForKey(workflow, idempotencyKey) : null;
    if (runId != null && derived != null && !runId.equals(derived)) {
      throw refused("runId", "must be left out with an idempotency key (the key names the run: " + derived + ")", runId);
    }
    String id = runId != null ? runId : derived != null ? derived : newRunId();
    checkRunId(id);
    checkPlainValue("input", input);
    Map<String, Object> body = header("start", id);
    body.put("workflow", workflow);
    body.put("version", version);
    if (input != null) body.put("input", input);
    if (idempotencyKey != null) body.put("idempotencyKey", idempotencyKey);
    body.put("enqueuedAt", System.currentTimeMillis());
    if (priority != null) body.put("priority", priority);
    return new Outgoing("start", id, encode(body), "start:" + id, priority);
  }

  /** A signal; {@code signalId} null: a random UUID. A sender that retries reuses its signal id. */
  public static Outgoing signal(String runId, String name, Object payload, String signalId) {
    checkRunId(runId);
    if (name == null || name.isEmpty()) throw refused("name", "must be a non-empty string", name);
    String id = signalId != null ? signalId : UUID.randomUUID().toString();
    if (id.isEmpty()) throw refused("signalId", "must be a non-empty string", id);
    checkPlainValue("payload", payload);
    Map<String, Object> body = header("signal", runId);
    body.put("name", name);
    body.put("signalId", id);
    if (payload != null) body.put("payload", payload);
    return new Outgoing("signal", runId, encode(body), "signal:" + runId + ":" + id, null);
  }

  /** A cancel: no de-duplication id, since a repeated cancel changes nothing. */
  public static Outgoing cancel(String runId, String reason) {
    checkRunId(runId);
    Map<String, Object> body = header("cancel", runId);
    body.put("reason", reason == null ? "cancelled by a Java producer" : reason);
    return new Outgoing("cancel", runId, encode(body), null, null);
  }

  /** A fresh run id for a start without a key, as Baton's client makes one. */
  public static String newRunId() {
    return UUID.randomUUID().toString();
  }

  private static Map<String, Object> header(String kind, String runId) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("v", CODEC_VERSION);
    body.put("kind", kind);
    body.put("runId", runId);
    return body;
  }

  private static byte[] encode(Map<String, Object> body) {
    return Json.write(body).getBytes(StandardCharsets.UTF_8);
  }

  private static void checkRunId(String runId) {
    if (runId == null || !RUN_ID.matcher(runId).matches()) {
      throw refused("runId", "must be 1-128 characters from letters, digits, '_' and '-'", runId);
    }
  }

  /** A sealed value needs the fleet's keys and Baton's codec; a value that only looks sealed is poison. */
  private static void checkPlainValue(String field, Object value) {
    if (value instanceof Map<?, ?> map && map.containsKey("$baton.sealed")) {
      throw refused(field, "must not have a '$baton.sealed' field (it marks encrypted values)", "an object");
    }
  }

  private static IllegalArgumentException refused(String field, String problem, Object found) {
    return new IllegalArgumentException(field + " " + problem + "; found " + found);
  }
}
