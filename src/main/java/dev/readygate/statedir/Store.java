package dev.readygate.statedir;

import java.util.Locale;

/** What readygate keeps in its state directory. */
public enum Store {
    /** {@code restarts.jsonl} and its rotated files. */
    RESTART_HISTORY(
            "restarts.jsonl", "the restart history is kept in memory only (the last starts, until readygate restarts)"),
    /** {@code starts-in-progress.json}: the engine starts readygate saw begin and has not recorded yet. */
    START_JOURNAL(
            "starts-in-progress.json",
            "a start in progress when readygate is killed is not known to the next readygate (recorded as first seen,"
                    + " if at all)"),
    /** {@code canary-baselines.json}. */
    CANARY_BASELINES(
            "canary-baselines.json",
            "learned canary baselines are kept in memory only (learned again after a restart)");

    private final String file;
    private final String consequence;

    Store(String file, String consequence) {
        this.file = file;
        this.consequence = consequence;
    }

    /** The snake_case name used in {@code /status}, logs and metrics. */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The file (or first file) it is kept in. */
    public String file() {
        return file;
    }

    /** What a failing write means for it. */
    String consequence() {
        return consequence;
    }
}
