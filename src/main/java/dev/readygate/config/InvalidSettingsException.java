package dev.readygate.config;

import java.util.List;

/**
 * Settings that stop readygate's start: unknown {@code readygate.*} names and refused values, each said in the user's
 * terms (the key, the value as written, where it was written). {@link InvalidSettingsFailureAnalyzer} makes them the
 * whole of Spring Boot's failure report.
 */
public final class InvalidSettingsException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final List<String> problems;

    InvalidSettingsException(List<String> problems) {
        super(String.join("\n", problems));
        this.problems = List.copyOf(problems);
    }

    /**
     * A value that bound but was refused when readygate started to use it (a file that cannot be read): said as a
     * refused setting is, {@code <key>: <problem> (was <value>)}, and reported as one, without a stack trace.
     */
    public static InvalidSettingsException refused(String problem) {
        return new InvalidSettingsException(List.of(problem));
    }

    /** One entry per problem: its first line names the key, the next ones where it was written. */
    public List<String> problems() {
        return problems;
    }
}
