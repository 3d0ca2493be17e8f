package dev.readygate.readiness;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The engine starts of the last {@code window}: {@code starts} of them or more is a restart loop. A start that begins
 * in a loop is held out of service ({@link EngineState.Held}) until it has stayed up for {@code hold}, doubled for each
 * start of the loop beyond the {@code starts} that made it one, at most {@code maxHold}: the back-off between the
 * loop's rounds. A start that follows another within the window, before the loop is one (the second start of what may
 * become a loop), is held until it has stayed up as long as the start before it did (from that start's beginning to
 * its own), at most {@code hold}: a start that dies as young as the one before it never serves, and a restart after a
 * start that lived longer than the window is not held at all. Pure; the one restart-loop decision, read by readiness
 * (the hold), restart tracking and the metrics.
 *
 * @param window {@code readygate.restart.loop-window}
 * @param starts {@code readygate.restart.loop-starts}
 * @param hold {@code readygate.restart.loop-hold}: how long a start of a loop must stay up before it is verified
 *     again and serves (0: no start is held)
 * @param maxHold {@code readygate.restart.loop-hold-max}: the longest hold the back-off reaches
 * @param recent when the starts within the window began, oldest first
 */
public record RestartLoop(Duration window, int starts, Duration hold, Duration maxHold, List<Instant> recent) {

    public RestartLoop {
        if (starts < 2) {
            throw new IllegalArgumentException("a restart loop takes at least 2 starts");
        }
        if (hold.isNegative() || maxHold.compareTo(hold) < 0) {
            throw new IllegalArgumentException("the hold must be between 0 and the longest hold");
        }
        recent = List.copyOf(recent);
    }

    public RestartLoop(Duration window, int starts, Duration hold, Duration maxHold) {
        this(window, starts, hold, maxHold, List.of());
    }

    /** With a start that began at {@code at}; starts older than the window before it are dropped. */
    public RestartLoop started(Instant at) {
        List<Instant> kept = new ArrayList<>();
        recent.stream().filter(start -> !start.isBefore(at.minus(window))).forEach(kept::add);
        kept.add(at);
        return new RestartLoop(window, starts, hold, maxHold, kept);
    }

    /** Whether {@code starts} starts began within the window before {@code now}. */
    public boolean looping(Instant now) {
        return within(now) >= starts;
    }

    /**
     * Until when a start that began at {@code at} (the latest of {@link #recent}) is held, or null when it is not: in a
     * loop, {@code hold} for the start that made it one, twice that for the next, and so on, at most {@code maxHold};
     * before, a start that follows another within the window is held for as long as the one before it lived (the time
     * between their beginnings), at most {@code hold}.
     */
    public @Nullable Instant heldUntil(Instant at) {
        List<Instant> began = recent.stream()
                .filter(start -> !start.isAfter(at) && !start.isBefore(at.minus(window)))
                .toList();
        int count = began.size();
        if (count < 2 || hold.isZero()) {
            return null;
        }
        if (count < starts) {
            Duration lived = Duration.between(began.get(count - 2), at);
            return at.plus(lived.compareTo(hold) > 0 ? hold : lived);
        }
        long doublings = Math.min(count - starts, 30);
        Duration backedOff = hold.multipliedBy(1L << doublings);
        return at.plus(backedOff.compareTo(maxHold) > 0 ? maxHold : backedOff);
    }

    private long within(Instant now) {
        return recent.stream()
                .filter(at -> !at.isAfter(now) && !at.isBefore(now.minus(window)))
                .count();
    }
}
