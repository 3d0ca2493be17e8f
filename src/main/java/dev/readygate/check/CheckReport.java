package dev.readygate.check;

import java.util.ArrayList;
import java.util.List;

/**
 * What {@code readygate check} found, in sections of labelled lines, with the configuration problems, the reasons
 * readygate would not gate the engine correctly, and the verdict ({@link Verdict}, with its exit status). Rendered as plain text for a person (and a CI log).
 *
 * @param target the engine's base URL
 * @param sections what each step saw
 * @param problems configuration that does not fit the engine, and degraded modes worth knowing (warnings)
 * @param failures why readygate would not gate this engine correctly (empty: it would)
 */
record CheckReport(String target, List<Section> sections, List<String> problems, List<String> failures) {

    CheckReport {
        sections = List.copyOf(sections);
        problems = List.copyOf(problems);
        failures = List.copyOf(failures);
    }

    /** One labelled line. */
    record Line(String label, String value) {}

    /** A titled group of lines. */
    record Section(String title, List<Line> lines) {

        Section {
            lines = List.copyOf(lines);
        }
    }

    /**
     * What the check concludes, each with its exit status (2, a configuration readygate cannot start with, comes before
     * any check: {@link CheckLauncher}).
     */
    enum Verdict {
        /** No failure, no problem or warning: readygate would gate this engine correctly. */
        GATES_CORRECTLY(0),
        /** Each reason listed: readygate would not gate this engine correctly. */
        WOULD_NOT_GATE(1),
        /**
         * No failure, but configuration problems or warnings: readygate would gate this engine, with the limits they name
         * (no busy detection, a canary disabled, ...), which an init container or CI job may accept or not.
         */
        GATES_WITH_LIMITS(3);

        private final int exitStatus;

        Verdict(int exitStatus) {
            this.exitStatus = exitStatus;
        }

        int exitStatus() {
            return exitStatus;
        }
    }

    /** Any failure is {@code WOULD_NOT_GATE}; else any problem or warning is {@code GATES_WITH_LIMITS}. */
    Verdict verdict() {
        if (!failures.isEmpty()) {
            return Verdict.WOULD_NOT_GATE;
        }
        return problems.isEmpty() ? Verdict.GATES_CORRECTLY : Verdict.GATES_WITH_LIMITS;
    }

    String render() {
        StringBuilder out = new StringBuilder();
        out.append("readygate check of ").append(target).append('\n');
        for (Section section : sections) {
            out.append('\n').append(section.title()).append('\n');
            int width = section.lines().stream()
                    .mapToInt(line -> line.label().length())
                    .max()
                    .orElse(0);
            for (Line line : section.lines()) {
                out.append("  ")
                        .append(line.label())
                        .append(" ".repeat(width - line.label().length() + 2))
                        .append(line.value())
                        .append('\n');
            }
        }
        out.append("\nconfiguration problems and warnings\n");
        if (problems.isEmpty()) {
            out.append("  none\n");
        }
        problems.forEach(problem -> out.append("  - ").append(problem).append('\n'));
        out.append('\n');
        Verdict verdict = verdict();
        switch (verdict) {
            case GATES_CORRECTLY ->
                out.append("verdict: readygate would gate this engine correctly (exit ")
                        .append(verdict.exitStatus())
                        .append(")\n");
            case GATES_WITH_LIMITS ->
                out.append("verdict: readygate would gate this engine, with the limits of the ")
                        .append(problems.size())
                        .append(problems.size() == 1 ? " problem or warning" : " problems and warnings")
                        .append(" above (exit ")
                        .append(verdict.exitStatus())
                        .append(")\n");
            case WOULD_NOT_GATE -> {
                out.append("verdict: readygate would NOT gate this engine correctly (exit ")
                        .append(verdict.exitStatus())
                        .append("):\n");
                failures.forEach(failure -> out.append("  - ").append(failure).append('\n'));
            }
        }
        return out.toString();
    }

    /** Collects sections, problems and failures as the check goes. */
    static final class Builder {

        private final String target;
        private final List<Section> sections = new ArrayList<>();
        private final List<String> problems = new ArrayList<>();
        private final List<String> failures = new ArrayList<>();
        private List<Line> current = new ArrayList<>();
        private String title = "";

        Builder(String target) {
            this.target = target;
        }

        Builder section(String name) {
            close();
            title = name;
            current = new ArrayList<>();
            return this;
        }

        Builder line(String label, String value) {
            current.add(new Line(label, value));
            return this;
        }

        Builder problem(String problem) {
            problems.add(problem);
            return this;
        }

        Builder failure(String failure) {
            failures.add(failure);
            return this;
        }

        private void close() {
            if (!title.isEmpty()) {
                sections.add(new Section(title, current));
            }
        }

        CheckReport build() {
            close();
            title = "";
            return new CheckReport(target, sections, problems, failures);
        }
    }
}
