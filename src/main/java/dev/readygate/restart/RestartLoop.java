package dev.readygate.restart;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The starts of the last {@code window}: {@code starts} of them or more is a restart loop. Pure.
 *
 * @param window {@code readygate.restart.loop-window}
 * @param starts {@code readygate.restart.loop-starts}
 * @param recent when the starts within the window began, oldest first
 */
record RestartLoop(Duration window, int starts, List<Instant> recent) {

    RestartLoop {
        recent = List.copyOf(recent);
    }

    RestartLoop(Duration window, int starts) {
        this(window, starts, List.of());
    }

    /** With a start that began at {@code at}; starts older than the window before it are dropped. */
    RestartLoop started(Instant at) {
        List<Instant> kept = new ArrayList<>();
        recent.stream().filter(start -> !start.isBefore(at.minus(window))).forEach(kept::add);
        kept.add(at);
        return new RestartLoop(window, starts, kept);
    }

    /** Whether {@code starts} starts began within the window before {@code now}. */
    boolean looping(Instant now) {
        return recent.stream().filter(at -> !at.isBefore(now.minus(window))).count() >= starts;
    }
}
