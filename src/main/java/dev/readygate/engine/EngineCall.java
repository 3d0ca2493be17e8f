package dev.readygate.engine;

import java.time.Duration;

/**
 * The outcome of one call to the engine: a value, or a named failure. Never an error signal: every transport,
 * status and framing problem is a {@link Failure}.
 *
 * @param <T> the value of a successful call
 */
public sealed interface EngineCall<T> {

    /** How long the call took, until its value or its failure was known. */
    Duration elapsed();

    /** The engine answered as expected. */
    record Success<T>(T value, Duration elapsed) implements EngineCall<T> {}

    /** The call failed; {@code failure} says how. */
    record Failure<T>(EngineFailure failure, Duration elapsed) implements EngineCall<T> {}
}
