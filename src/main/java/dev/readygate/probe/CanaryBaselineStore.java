package dev.readygate.probe;

import dev.readygate.statedir.StateDir;
import dev.readygate.statedir.Store;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Learned canary baselines, one per {@link BaselineKey}, kept in {@code <state-dir>/canary-baselines.json} so they
 * survive readygate's restarts. Written atomically: a temporary file, forced to disk, then renamed over the file, so
 * a full disk or a crash leaves the old file whole (and no temporary file). A write that fails (a read-only, full or
 * vanished state directory, or another readygate holding it) keeps the baseline in memory and is the
 * {@link StateDir}'s degraded reason: it never fails the canary. Blocking file I/O: callers run it on a
 * blocking-capable scheduler.
 */
final class CanaryBaselineStore {

    private static final Logger logger = LoggerFactory.getLogger(CanaryBaselineStore.class);
    static final String FILE = "canary-baselines.json";

    private final StateDir stateDir;
    private final Path file;
    private final JsonMapper json;
    private @Nullable Map<String, Baseline> baselines;
    private final @Nullable ModelAcceptance acceptances;

    /** A learned answer and when it was learned. */
    public record Baseline(CanaryAnswer answer, Instant learnedAt) {}

    public CanaryBaselineStore(StateDir stateDir, JsonMapper json) {
        this(stateDir, json, true);
    }

    /**
     * @param takesAcceptances whether this store takes the operator's model acceptances ({@link ModelAcceptance}): the
     *     sidecar's does, {@code readygate check}'s (which only reads) does not
     */
    public CanaryBaselineStore(StateDir stateDir, JsonMapper json, boolean takesAcceptances) {
        this.stateDir = stateDir;
        this.file = stateDir.directory().resolve(FILE);
        this.json = json;
        this.acceptances = takesAcceptances ? new ModelAcceptance(stateDir.directory(), json) : null;
    }

    /** Whether the operator asked to accept the model served now ({@code readygate accept-model}). Blocking. */
    public boolean acceptancePending() {
        return acceptances != null && acceptances.pending();
    }

    /** Takes the operator's pending acceptance, or null when there is none. Blocking. */
    synchronized ModelAcceptance.@Nullable Request takeAcceptance() {
        if (acceptances == null) {
            return null;
        }
        try {
            return acceptances.take();
        } catch (IOException ex) {
            logger.warn("Cannot take the model acceptance in {}: {}", stateDir.directory(), ex.getMessage());
            return null;
        }
    }

    /** Audits what was done with a taken acceptance (through the state directory's writes: a failure is its problem). */
    synchronized void audit(ModelAcceptance.Request request, java.util.Map<String, @Nullable Object> outcome) {
        if (acceptances != null) {
            stateDir.write(Store.CANARY_BASELINES, () -> acceptances.audit(request, outcome));
        }
    }

    public synchronized @Nullable Baseline find(BaselineKey key) {
        return load().get(key.value());
    }

    /**
     * Keeps {@code answer} as the baseline of {@code key}, in memory and, when it can, in the file.
     *
     * @return whether it was written to the file
     */
    public synchronized boolean save(BaselineKey key, CanaryAnswer answer, Instant at) {
        Map<String, Baseline> all = new LinkedHashMap<>(load());
        all.put(key.value(), new Baseline(answer, at));
        baselines = all;
        return stateDir.write(Store.CANARY_BASELINES, () -> write(all));
    }

    private Map<String, Baseline> load() {
        if (baselines != null) {
            return baselines;
        }
        Map<String, Baseline> loaded = new LinkedHashMap<>();
        if (Files.exists(file)) {
            try {
                JsonNode root = json.readTree(Files.readString(file));
                for (Map.Entry<String, JsonNode> entry : root.properties()) {
                    JsonNode node = entry.getValue();
                    List<Integer> ids = node.path("tokenIds")
                            .valueStream()
                            .map(JsonNode::intValue)
                            .toList();
                    JsonNode text = node.get("text");
                    JsonNode logprob = node.get("logprob");
                    loaded.put(
                            entry.getKey(),
                            new Baseline(
                                    new CanaryAnswer(
                                            ids,
                                            text == null || text.isNull() ? null : text.asString(),
                                            logprob == null || logprob.isNull() ? null : logprob.doubleValue()),
                                    Instant.parse(node.path("learnedAt").asString())));
                }
            } catch (IOException | RuntimeException ex) {
                // A damaged file loses its baselines, not readygate: they are learned again on a trusted start.
                logger.warn("Ignoring unreadable canary baselines in {}: {}", file, ex.getMessage());
            }
        }
        baselines = loaded;
        return loaded;
    }

    private void write(Map<String, Baseline> all) throws IOException {
        Map<String, Object> doc = new LinkedHashMap<>();
        all.forEach((key, baseline) -> {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("tokenIds", baseline.answer().tokenIds());
            entry.put("text", baseline.answer().text());
            entry.put("logprob", baseline.answer().logprob());
            entry.put("learnedAt", baseline.learnedAt().toString());
            doc.put(key, entry);
        });
        byte[] bytes = json.writerWithDefaultPrettyPrinter().writeValueAsBytes(doc);
        StateDir.replaceAtomically(file, bytes);
    }
}
