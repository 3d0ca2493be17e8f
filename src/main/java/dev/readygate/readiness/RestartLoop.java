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
 * loop's rounds. Before the loop is one, a start that follows a start which did not stay up {@code hold} (from that
 * start's beginning to its own) is held for {@code hold} as well: a crash loop serves from its second start on no
 * more than from its third, while a restart after a start that stayed up {@code hold} is not held. The start readygate
 * first saw running counts from when the engine's own evidence says it began ({@link #beginning}, {@link #dated}: its
 * log's start-up header, its {@code process_start_time_seconds}), and without any, from when readygate first saw it:
 * the latest it can have begun, so that a restart soon after is held rather than served in a crash loop. Pure; the
 * one restart-loop decision, read by readiness (the hold), restart tracking and the metrics.
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

    /**
     * When {@code start}, counted at {@code counted} (when readygate saw it begin, or first saw it), began for the loop:
     * a start readygate first saw running, when its log's start-up header says (the engine's own word, earlier than
     * readygate's first look); any other start, or one without such evidence, when it was counted.
     */
    public static Instant beginning(EngineStart start, Instant counted) {
        return start.firstSeen() && start.source().fromEngine() && start.since().isBefore(counted)
                ? start.since()
                : counted;
    }

    /** With a start that began at {@code at}; starts older than the window before it are dropped. */
    public RestartLoop started(Instant at) {
        List<Instant> kept = new ArrayList<>();
        recent.stream().filter(start -> !start.isBefore(at.minus(window))).forEach(kept::add);
        kept.add(at);
        return new RestartLoop(window, starts, hold, maxHold, kept);
    }

    /**
     * With the start counted at {@code counted} dated by the engine's own evidence, learned after it was counted (the
     * {@code process_start_time_seconds} of the start readygate first saw running): it began at {@code began}, when
     * that is earlier. Evidence of a later beginning than readygate's own sight of the start is a skewed clock, and
     * changes nothing.
     */
    public RestartLoop dated(Instant counted, Instant began) {
        if (!began.isBefore(counted) || !recent.contains(counted)) {
            return this;
        }
        List<Instant> kept = new ArrayList<>(recent);
        kept.remove(counted);
        kept.add(began);
        kept.sort(null);
        return new RestartLoop(window, starts, hold, maxHold, kept);
    }

    /**
     * Without the start that began at {@code at} (a deliberate model swap is not a repeat of the same start): the
     * loop as if it had never begun.
     */
    public RestartLoop without(Instant at) {
        List<Instant> kept = new ArrayList<>(recent);
        kept.remove(at);
        return new RestartLoop(window, starts, hold, maxHold, kept);
    }

    /** Whether {@code starts} starts began within the window before {@code now}. */
    public boolean looping(Instant now) {
        return within(now) >= starts;
    }

    /**
     * Until when a start that began at {@code at} (the latest of {@link #recent}) is held, or null when it is not: in a
     * loop, {@code hold} for the start that made it one, twice that for the next, and so on, at most {@code maxHold};
     * before, {@code hold} for a start that follows one which lived less than {@code hold} (the time between their
     * beginnings).
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
            return lived.compareTo(hold) < 0 ? at.plus(hold) : null;
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
