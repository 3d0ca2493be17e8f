package dev.readygate.probe;

import org.jspecify.annotations.Nullable;

/**
 * Whether the snapshot manifest may give the canary its expected answer: not when it was taken on another GPU, driver
 * or vLLM version than the engine runs on now (its oracle's logprob differs by GPU, and vLLM itself refuses such a
 * restore). Restart tracking provides it, from the manifest and the facts of the node.
 */
@FunctionalInterface
public interface ManifestTrust {

    /** A manifest that is never distrusted (no snapshot directory). */
    ManifestTrust ALWAYS = vllmVersion -> null;

    /**
     * Why the manifest must not vouch for an engine of {@code vllmVersion} on this node, in words, or null when it may.
     * Blocking: reads files.
     */
    @Nullable
    String distrust(String vllmVersion);
}
