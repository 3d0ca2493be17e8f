package dev.readygate.gateway;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/** The answer to "may this request go to the engine now?": admitted, or refused with what the client is told. */
public sealed interface Admission {

    /**
     * The request goes to the engine.
     *
     * @param startId the engine start it goes to (its end is judged as that start's traffic); null when none is known
     * @param ticket its place among the requests in flight, given back once as its exchange with the engine ends
     */
    record Admitted(@Nullable String startId, Ticket ticket) implements Admission {

        /** Admitted without a place counted (tests, and admissions that count none). */
        public Admitted(@Nullable String startId) {
            this(startId, Ticket.NONE);
        }
    }

    /**
     * The request is answered without the engine: its status, {@code Retry-After} and an OpenAI-style error body, and
     * never reaches the engine.
     *
     * @param retryAfter when the client may try again ({@code Retry-After}, whole seconds, at least one)
     * @param error the answer: its status, and the body's {@code type} and {@code code}
     * @param message the error's {@code message}
     * @param closeConnection whether the answer closes the client's connection ({@code Connection: close}), so that its
     *     next request opens one the Service may send to another pod (a draining pod)
     */
    record Refused(Duration retryAfter, OpenAiError error, String message, boolean closeConnection)
            implements Admission {
        public Refused {
            if (retryAfter.isNegative()) {
                throw new IllegalArgumentException("retryAfter must not be negative (was " + retryAfter + ")");
            }
        }

        /** Refused, the connection kept. */
        public Refused(Duration retryAfter, OpenAiError error, String message) {
            this(retryAfter, error, message, false);
        }

        /** {@code Retry-After} in whole seconds, rounded up, at least 1. */
        public long retryAfterSeconds() {
            return Math.max(1, retryAfter.getSeconds() + (retryAfter.getNano() > 0 ? 1 : 0));
        }
    }

    /** A place among the requests in flight: given back once, however often {@link #close} is called. */
    final class Ticket {

        /** A ticket that counts nothing. */
        static final Ticket NONE = new Ticket(() -> {});

        private final AtomicBoolean closed = new AtomicBoolean();
        private final Runnable onClose;

        Ticket(Runnable onClose) {
            this.onClose = onClose;
        }

        /** Gives the place back (the first call only). */
        public void close() {
            if (closed.compareAndSet(false, true)) {
                onClose.run();
            }
        }

        /** Whether the place was given back. */
        public boolean closed() {
            return closed.get();
        }
    }
}
