package dev.readygate.restart;

import java.time.Instant;

/** What the engine's log says about the current start; told when a new start begins. */
public interface StartLog extends AutoCloseable {

    /** The findings of the current start so far. */
    LogFindings current();

    /** A new engine start begins: later lines belong to it. */
    void newStart();

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
