package dev.readygate.probe;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The oracle in a CRIU snapshot's {@code manifest.json} ({@code oracle_token_ids}, {@code oracle_text},
 * {@code oracle_sampled_token_logprob}): the answer vLLM's restore itself checks, for the request it replays ("The
 * capital of France is", one token, temperature 0, seed 0). Blocking file I/O. A manifest taken on another GPU, driver
 * or vLLM version than the engine's ({@link ManifestTrust}) gives no answer to trust.
 */
final class SnapshotOracle {

    private static final Logger logger = LoggerFactory.getLogger(SnapshotOracle.class);

    /** The prompt of vLLM's snapshot canary; the oracle applies only to a canary with this prompt and one token. */
    public static final String ORACLE_PROMPT = "The capital of France is";

    private final @Nullable Path snapshotDir;
    private final JsonMapper json;
    private final ManifestTrust trust;

    public SnapshotOracle(@Nullable Path snapshotDir, JsonMapper json) {
        this(snapshotDir, json, ManifestTrust.ALWAYS);
    }

    public SnapshotOracle(@Nullable Path snapshotDir, JsonMapper json, ManifestTrust trust) {
        this.snapshotDir = snapshotDir;
        this.json = json;
        this.trust = trust;
    }

    /** Why the manifest must not vouch for an engine of {@code vllmVersion} here, or null when it may. Blocking. */
    public @Nullable String distrust(String vllmVersion) {
        return snapshotDir == null ? null : trust.distrust(vllmVersion);
    }

    /** The oracle answer, or null when no snapshot directory is configured or its manifest has none. */
    public @Nullable CanaryAnswer read() {
        if (snapshotDir == null) {
            return null;
        }
        Path manifest = snapshotDir.resolve("manifest.json");
        if (!Files.isReadable(manifest)) {
            return null;
        }
        try {
            JsonNode doc = json.readTree(Files.readString(manifest));
            List<Integer> ids = doc.path("oracle_token_ids")
                    .valueStream()
                    .map(JsonNode::intValue)
                    .toList();
            JsonNode text = doc.get("oracle_text");
            JsonNode logprob = doc.get("oracle_sampled_token_logprob");
            if (ids.isEmpty() && text == null && logprob == null) {
                return null;
            }
            return new CanaryAnswer(
                    ids,
                    text == null || text.isNull() ? null : text.asString(),
                    logprob == null || !logprob.isNumber() ? null : logprob.doubleValue());
        } catch (IOException | RuntimeException ex) {
            logger.warn("Ignoring unreadable snapshot manifest {}: {}", manifest, ex.getMessage());
            return null;
        }
    }
}
