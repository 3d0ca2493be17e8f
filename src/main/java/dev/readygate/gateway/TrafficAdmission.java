package dev.readygate.gateway;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The one place the gateway asks whether a request may go to the engine now, asked once per request before anything
 * is sent, and once more for a request whose first attempt failed before any answer: {@link RulesAdmission}, by
 * {@link AdmissionRules}. Both are cheap and non-blocking (they run on the traffic event loop); a request that waits
 * (for a free stream, through a short start, for the engine's next verified start) is answered later.
 */
public interface TrafficAdmission {

    /** Whether the request may go to the engine: at once, unless it waits. */
    Mono<Admission> admit();

    /**
     * Whether a request whose connection to the engine failed before any answer (its start {@code failedStart}) is
     * sent once more: admitted once the engine is verified again, refused at the deadline; empty when it is not sent
     * again (retries are off), and then the client is answered the failure.
     */
    Mono<Admission> retry(@Nullable String failedStart);
}
