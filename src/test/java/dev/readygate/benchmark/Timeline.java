package dev.readygate.benchmark;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A boolean signal over time (ready or not, able to serve or not), as the instants it changed. Thread-safe: one
 * recorder appends, the stages read. Changes must be appended in time order; a change to the current value is ignored.
 */
final class Timeline {

    /** One change: from {@code at} on, the signal is {@code value}. */
    record Change(Instant at, boolean value) {}

    private final List<Change> changes = new ArrayList<>();
    private final boolean initial;

    Timeline(boolean initial) {
        this.initial = initial;
    }

    synchronized void set(Instant at, boolean value) {
        if (value == current()) {
            return;
        }
        Change last = changes.isEmpty() ? null : changes.getLast();
        // Clocks read on different threads can disagree by a few microseconds: keep the order of appending.
        Instant when = last != null && at.isBefore(last.at()) ? last.at() : at;
        changes.add(new Change(when, value));
    }

    synchronized boolean current() {
        return changes.isEmpty() ? initial : changes.getLast().value();
    }

    synchronized boolean valueAt(Instant at) {
        boolean value = initial;
        for (Change change : changes) {
            if (change.at().isAfter(at)) {
                break;
            }
            value = change.value();
        }
        return value;
    }

    /** The first instant at or after {@code from} at which the signal turned {@code value}, or null. */
    synchronized @Nullable Instant firstChangeTo(boolean value, Instant from) {
        for (Change change : changes) {
            if (!change.at().isBefore(from) && change.value() == value) {
                return change.at();
            }
        }
        return null;
    }

    synchronized List<Change> changes() {
        return List.copyOf(changes);
    }

    /** How long, within {@code [from, to)}, this signal was {@code mine} while {@code other} was {@code theirs}. */
    Duration overlap(boolean mine, Timeline other, boolean theirs, Instant from, Instant to) {
        List<Instant> cuts = new ArrayList<>();
        cuts.add(from);
        for (Change change : changes()) {
            if (change.at().isAfter(from) && change.at().isBefore(to)) {
                cuts.add(change.at());
            }
        }
        for (Change change : other.changes()) {
            if (change.at().isAfter(from) && change.at().isBefore(to)) {
                cuts.add(change.at());
            }
        }
        cuts.add(to);
        cuts.sort(null);
        Duration total = Duration.ZERO;
        for (int i = 0; i + 1 < cuts.size(); i++) {
            Instant start = cuts.get(i);
            Instant end = cuts.get(i + 1);
            if (end.isAfter(start) && valueAt(start) == mine && other.valueAt(start) == theirs) {
                total = total.plus(Duration.between(start, end));
            }
        }
        return total;
    }

    static double millis(Instant from, Instant to) {
        return Duration.between(from, to).toNanos() / 1e6;
    }
}
