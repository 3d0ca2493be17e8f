package dev.readygate.gateway;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** The answer to "may this request go to the engine now?": admitted, or refused with what the client is told. */
public sealed interface Admission {

    /**
     * The request goes to the engine.
     *
     * @param startId the engine start it goes to (its end is judged as that start's traffic); null when none is known
     */
    record Admitted(@Nullable String startId) implements Admission {}

    /**
     * The request is answered 503 with {@code Retry-After} and an OpenAI-style error body, and never reaches the
     * engine.
     *
     * @param retryAfter when the client may try again ({@code Retry-After}, whole seconds, at least one)
     * @param error the answer: its status, and the body's {@code type} and {@code code}
     * @param message the error's {@code message}
     */
    record Refused(Duration retryAfter, OpenAiError error, String message) implements Admission {
        public Refused {
            if (retryAfter.isNegative()) {
                throw new IllegalArgumentException("retryAfter must not be negative (was " + retryAfter + ")");
            }
        }

        /** {@code Retry-After} in whole seconds, rounded up, at least 1. */
        public long retryAfterSeconds() {
            return Math.max(1, retryAfter.getSeconds() + (retryAfter.getNano() > 0 ? 1 : 0));
        }
    }
}
