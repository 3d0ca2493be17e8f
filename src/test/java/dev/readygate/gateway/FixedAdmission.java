package dev.readygate.gateway;

import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/** An admission that answers what a test sets, at once, and never sends a request again. */
record FixedAdmission(Supplier<Admission> answer) implements TrafficAdmission {

    @Override
    public Mono<Admission> admit() {
        return Mono.fromSupplier(answer);
    }

    @Override
    public Mono<Admission> retry(@Nullable String failedStart) {
        return Mono.empty();
    }
}
