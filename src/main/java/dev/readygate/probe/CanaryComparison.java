package dev.readygate.probe;

import org.jspecify.annotations.Nullable;

/**
 * The canary's expected answer, where it came from, and what the engine answered.
 *
 * @param source where the expectation came from
 * @param expected the expectation (null when there was none and none could be learned)
 * @param actual the engine's answer
 * @param matches whether they agree
 */
public record CanaryComparison(
        CanaryExpectation.Source source, @Nullable CanaryAnswer expected, CanaryAnswer actual, boolean matches) {}
