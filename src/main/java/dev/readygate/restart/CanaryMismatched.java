package dev.readygate.restart;

/**
 * Published the first time an engine start's canary mismatched, with the start's path from every log line so far: on
 * a preload hit, the cache served another checkpoint's weights.
 *
 * @param path the start's restart path
 */
public record CanaryMismatched(RestartPath path) {}
