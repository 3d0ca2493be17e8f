package dev.readygate.status;

import dev.readygate.config.ReadygateProperties;
import dev.readygate.probe.CanaryComparison;
import dev.readygate.probe.EngineFacts;
import dev.readygate.probe.ProbeHistory;
import dev.readygate.probe.ProbeKind;
import dev.readygate.probe.ProbeReport;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.ratelimiter.RateLimiter;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

/**
 * {@code /status}'s {@code probes} section: the last report and the last failure of each heavy probe kind (with its
 * measurements and the canary's expected and actual answer), the last skip, and the heavy probes' circuit breaker
 * and token budget.
 */
@Component
final class ProbesSection {

    private final ProbeHistory history;
    private final CircuitBreaker heavyProbeCircuitBreaker;
    private final RateLimiter heavyProbeRateLimiter;
    private final ReadygateProperties.Probe settings;

    ProbesSection(
            ProbeHistory history,
            CircuitBreaker heavyProbeCircuitBreaker,
            RateLimiter heavyProbeRateLimiter,
            ReadygateProperties properties) {
        this.history = history;
        this.heavyProbeCircuitBreaker = heavyProbeCircuitBreaker;
        this.heavyProbeRateLimiter = heavyProbeRateLimiter;
        this.settings = properties.probe();
    }

    Map<String, Object> of(EngineFacts facts) {
        Map<String, Object> probes = new LinkedHashMap<>();
        for (ProbeKind kind : ProbeKind.values()) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("last", report(history.last(kind)));
            entry.put("lastFailure", report(history.lastFailure(kind)));
            probes.put(kind.value(), entry);
        }
        Instant lastHeavy = facts.lastHeavy();
        probes.put("lastHeavyProbeAt", lastHeavy == null ? null : lastHeavy.toString());
        probes.put("heavyProbes", heavyProbes(heavyProbeCircuitBreaker.getState()));
        probes.put("lastSkipped", history.lastSkipped());
        probes.put("circuitBreaker", circuitBreaker());
        probes.put("tokenBudget", tokenBudget());
        return probes;
    }

    /** Whether heavy probes run, from their circuit breaker's state: {@code closed}, {@code half-open}, ... */
    static String heavyProbes(CircuitBreaker.State state) {
        return state == CircuitBreaker.State.OPEN
                ? "suspended after repeated failures"
                : state.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** The heavy probes' circuit breaker: its state and the failures it counts. */
    private Map<String, Object> circuitBreaker() {
        CircuitBreaker.Metrics metrics = heavyProbeCircuitBreaker.getMetrics();
        Map<String, Object> breaker = new LinkedHashMap<>();
        breaker.put("state", heavyProbeCircuitBreaker.getState().name().toLowerCase(Locale.ROOT));
        breaker.put("failedVerifications", metrics.getNumberOfFailedCalls());
        breaker.put("suspendAfterFailures", settings.suspendAfterFailures());
        breaker.put("suspension", settings.suspension().toString());
        breaker.put("refusedVerifications", metrics.getNumberOfNotPermittedCalls());
        return breaker;
    }

    /** The heavy probes' token budget: what is left of this minute's. */
    private Map<String, Object> tokenBudget() {
        Map<String, Object> budget = new LinkedHashMap<>();
        budget.put("tokensPerMinute", settings.maxTokensPerMinute());
        budget.put(
                "tokensLeftThisMinute",
                Math.max(0, heavyProbeRateLimiter.getMetrics().getAvailablePermissions()));
        return budget;
    }

    /** One probe report: when, how it ended and why, its measurements and its canary. */
    static @Nullable Map<String, Object> report(@Nullable ProbeReport report) {
        if (report == null) {
            return null;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("at", report.at().toString());
        out.put("outcome", report.outcome().name().toLowerCase(Locale.ROOT));
        out.put("reason", report.reason() == null ? null : report.reason().value());
        out.put("detail", report.detail());
        ProbeReport.Measurement m = report.measurement();
        if (m != null) {
            Map<String, Object> measured = new LinkedHashMap<>();
            measured.put("plannedPromptTokens", m.plannedPromptTokens());
            measured.put("promptTokens", m.promptTokens());
            measured.put("completionTokens", m.completionTokens());
            measured.put("timeToFirstTokenMs", m.timeToFirstToken().toMillis());
            measured.put("maxInterTokenLatencyMs", m.maxInterTokenLatency().toMillis());
            measured.put("meanInterTokenLatencyMs", m.meanInterTokenLatency().toMillis());
            measured.put("totalMs", m.total().toMillis());
            out.put("measurement", measured);
        }
        CanaryComparison canary = report.canary();
        if (canary != null) {
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("expectedFrom", canary.source().value());
            c.put(
                    "expected",
                    canary.expected() == null ? null : canary.expected().describe());
            c.put("actual", canary.actual().describe());
            c.put("matches", canary.matches());
            out.put("canary", c);
        }
        return out;
    }
}
