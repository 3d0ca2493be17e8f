package dev.readygate.metrics;

import dev.readygate.gateway.WorkInFlight;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.stereotype.Component;

/**
 * The work engine stops lost, by the gateway's own count ({@link WorkInFlight}): requests cut
 * ({@link MeterNames#GATEWAY_STOP_CUT_REQUESTS}) and the tokens they had streamed
 * ({@link MeterNames#GATEWAY_STOP_CUT_TOKENS}). Registered at 0 whether gateway mode is on or not; off, they stay 0.
 */
@Component
public class WorkLostMeters {

    public WorkLostMeters(MeterRegistry registry, WorkInFlight work) {
        FunctionCounter.builder(MeterNames.GATEWAY_STOP_CUT_REQUESTS, work, WorkInFlight::cutByStops)
                .description(
                        "Requests through the gateway cut by engine stops (crashes, replacements, drain deadlines)")
                .register(registry);
        FunctionCounter.builder(MeterNames.GATEWAY_STOP_CUT_TOKENS, work, WorkInFlight::tokensCutByStops)
                .description("Token-carrying events the requests cut by engine stops had passed to their clients")
                .register(registry);
    }
}
