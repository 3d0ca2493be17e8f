package dev.readygate.restart;

import java.time.Instant;
import reactor.core.publisher.Mono;

/** What the engine's log says about the current start; told when a new start begins. */
public interface StartLog extends AutoCloseable {

    /** The findings of the current start so far. */
    LogFindings current();

    /**
     * The findings of the current start once every line written so far was read (not only those of the last poll);
     * if a new start begins meanwhile, the findings as they were when asked.
     */
    default Mono<LogFindings> caughtUp() {
        return Mono.fromSupplier(this::current);
    }

    /** A new engine start begins: later lines belong to it. */
    void newStart();

    /** The current start was verified ready at {@code at}: every line read before then is its own (or older). */
    default void verified(Instant at) {}

    /** The engine restarted at {@code since} without readygate seeing it go away: older lines are not this start's. */
    default void newStart(Instant since) {
        newStart();
    }

    @Override
    default void close() {}

    /** No engine log configured. */
    StartLog NONE = new StartLog() {
        @Override
        public LogFindings current() {
            return LogFindings.none();
        }

        @Override
        public void newStart() {}
    };
}
