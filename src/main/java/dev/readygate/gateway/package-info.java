/**
 * Gateway mode (opt-in, {@code readygate.gateway.enabled}): the engine's OpenAI-compatible routes proxied on a traffic
 * port of its own, with its own event loops and connection budget, apart from readygate's port. Its pure decisions:
 * what a proxied answer showed ({@link dev.readygate.gateway.StreamWatch}), whose fault its end was
 * ({@link dev.readygate.gateway.TrafficJudge}), what traffic tells readiness and since when it proves the engine healthy
 * ({@link dev.readygate.gateway.TrafficHealth}), whether a new request is forwarded, held or refused
 * ({@link dev.readygate.gateway.AdmissionRules}, {@link dev.readygate.gateway.RetryAfter}) and the OpenAI-style body of a
 * refusal ({@link dev.readygate.gateway.OpenAiError}).
 */
@NullMarked
package dev.readygate.gateway;

import org.jspecify.annotations.NullMarked;
