package dev.readygate.restart;

/** Told about engine starts as they begin, become ready and end (metrics record them). */
public interface RestartListener {

    /** A start was attributed and recorded (ready, never ready, or superseded by the next start). */
    void recorded(RestartRecord record, boolean completed);

    /** A recorded start got its after-stop memory reading (its engine went away). */
    default void memoryRecorded(RestartRecord record) {}

    /** A preload hit's canary mismatched: the cache served another checkpoint's weights. */
    default void canaryMismatch(RestartPath path) {}
}
