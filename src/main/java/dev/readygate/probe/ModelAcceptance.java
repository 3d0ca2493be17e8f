package dev.readygate.probe;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The operator's acceptance of the model the engine serves now, made with {@code readygate accept-model}: the one way to
 * replace a learned canary baseline on purpose (a deliberate swap to another model with the same identity, or to other
 * weights). The command writes a request file, {@value #REQUEST}, into the state directory without taking readygate's
 * lock; the running readygate takes it (an atomic rename: the command can no longer withdraw it), releases a latched
 * {@code canary_mismatch}, learns the canary's next answer given alone as the baseline, and appends what it did to
 * {@value #AUDIT}, one JSON line per request: who asked, why, when, which model, the baseline before and after. A
 * request nobody takes within the command's wait is withdrawn by the command: none stays behind to accept a later model
 * unseen. Blocking file I/O.
 */
public final class ModelAcceptance {

    /** The pending request, written by the command. */
    public static final String REQUEST = "accept-model.json";

    /** What readygate did with each request, one JSON line each, appended. */
    public static final String AUDIT = "canary-acceptances.jsonl";

    private static final String TAKEN = REQUEST + ".taken";

    private final Path directory;
    private final JsonMapper json;

    /**
     * A request to accept the model served now.
     *
     * @param id the request's random id, which its audit line carries
     * @param requestedAt when the command wrote it
     * @param by who asked ({@code --by}, else the user that ran the command)
     * @param reason why ({@code --reason})
     */
    public record Request(String id, Instant requestedAt, String by, String reason) {}

    public ModelAcceptance(Path directory, JsonMapper json) {
        this.directory = directory;
        this.json = json;
    }

    // --- the command's side ---

    /**
     * Writes a request (a temporary file renamed into place, so readygate never reads half of one).
     *
     * @throws IllegalStateException when another request is pending
     */
    public Request request(String by, String reason, Instant at) throws IOException {
        if (Files.exists(directory.resolve(REQUEST))) {
            throw new IllegalStateException("another acceptance is pending in " + directory.resolve(REQUEST));
        }
        Request request = new Request(UUID.randomUUID().toString(), at, by, reason);
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("id", request.id());
        doc.put("requestedAt", at.toString());
        doc.put("by", by);
        doc.put("reason", reason);
        Files.createDirectories(directory);
        Path temporary = directory.resolve(REQUEST + "." + request.id() + ".tmp");
        Files.write(temporary, json.writeValueAsBytes(doc));
        try {
            Files.move(
                    temporary,
                    directory.resolve(REQUEST),
                    StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException ex) {
            Files.move(temporary, directory.resolve(REQUEST), StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(temporary);
        }
        return request;
    }

    /**
     * Withdraws {@code request} if readygate has not taken it yet.
     *
     * @return whether it was withdrawn (false: readygate took it, and its audit line follows)
     */
    public boolean withdraw(Request request) throws IOException {
        Request pending = read(directory.resolve(REQUEST));
        if (pending == null || !pending.id().equals(request.id())) {
            return false;
        }
        try {
            Files.delete(directory.resolve(REQUEST));
            return true;
        } catch (NoSuchFileException ex) {
            return false;
        }
    }

    /** The audit line of the request {@code id}, once readygate wrote it; null before. */
    public @Nullable JsonNode outcome(String id) throws IOException {
        Path audit = directory.resolve(AUDIT);
        if (!Files.exists(audit)) {
            return null;
        }
        List<String> lines = Files.readAllLines(audit, StandardCharsets.UTF_8);
        for (String line : lines.reversed()) {
            try {
                JsonNode node = json.readTree(line);
                if (node != null && id.equals(node.path("id").asString(""))) {
                    return node;
                }
            } catch (RuntimeException ex) {
                // A torn line (a crash while appending) is no outcome.
            }
        }
        return null;
    }

    // --- readygate's side ---

    /** Whether a request waits to be taken. */
    boolean pending() {
        return Files.exists(directory.resolve(REQUEST));
    }

    /**
     * Takes the pending request: renamed, so the command can no longer withdraw it. Null when there is none (or it was
     * withdrawn meanwhile, or cannot be read: an unreadable one is dropped).
     */
    @Nullable
    Request take() throws IOException {
        Path taken = directory.resolve(TAKEN);
        try {
            Files.move(directory.resolve(REQUEST), taken, StandardCopyOption.ATOMIC_MOVE);
        } catch (NoSuchFileException ex) {
            return null;
        }
        Request request = read(taken);
        if (request == null) {
            Files.deleteIfExists(taken);
        }
        return request;
    }

    /** Appends what was done with {@code request} to the audit, then forgets the request. */
    void audit(Request request, Map<String, @Nullable Object> outcome) throws IOException {
        Map<String, @Nullable Object> line = new LinkedHashMap<>();
        line.put("id", request.id());
        line.put("requestedAt", request.requestedAt().toString());
        line.put("by", request.by());
        line.put("reason", request.reason());
        line.putAll(outcome);
        byte[] bytes = (json.writeValueAsString(line) + "\n").getBytes(StandardCharsets.UTF_8);
        try (var channel = java.nio.channels.FileChannel.open(
                directory.resolve(AUDIT),
                StandardOpenOption.CREATE,
                StandardOpenOption.WRITE,
                StandardOpenOption.APPEND)) {
            java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(bytes);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            channel.force(true);
        }
        Files.deleteIfExists(directory.resolve(TAKEN));
    }

    private @Nullable Request read(Path file) {
        try {
            JsonNode doc = json.readTree(Files.readString(file));
            String id = doc.path("id").asString("");
            if (id.isEmpty()) {
                return null;
            }
            return new Request(
                    id,
                    Instant.parse(doc.path("requestedAt").asString()),
                    doc.path("by").asString(""),
                    doc.path("reason").asString(""));
        } catch (IOException | RuntimeException ex) {
            return null;
        }
    }
}
