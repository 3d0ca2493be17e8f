package dev.readygate.config;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;

/**
 * Spring Boot's failure report for {@link InvalidSettingsException}: the problems alone, ahead of Boot's own bind
 * analyzer (which would show the exception types).
 */
final class InvalidSettingsFailureAnalyzer extends AbstractFailureAnalyzer<InvalidSettingsException>
        implements Ordered {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidSettingsException cause) {
        return new FailureAnalysis(
                String.join("\n", cause.problems()),
                "Correct or remove the settings above. docs/readiness.md lists every readygate.* setting with its"
                        + " default and the forms it takes; docs/simulator.md the simulator's.",
                cause);
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
