package dev.readygate.engine;

import dev.readygate.config.ReadygateProperties;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.util.unit.DataSize;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** Creates clients for tests and checks the client's promise: one {@link EngineCall}, then completion, never an error. */
final class EngineCalls {

    static final DataSize MAX_BODY = DataSize.ofMegabytes(4);

    private EngineCalls() {}

    static WebClientEngineClient client(URI baseUrl, Duration requestTimeout, EngineApiKey apiKey) {
        ReadygateProperties.Engine engine = new ReadygateProperties.Engine(
                baseUrl, Duration.ofMillis(500), requestTimeout, MAX_BODY, null, null, "auto", null);
        return new WebClientEngineClient(engine, apiKey, System::nanoTime, Schedulers.parallel(), Clock.systemUTC());
    }

    static WebClientEngineClient client(URI baseUrl) {
        return client(baseUrl, Duration.ofSeconds(5), EngineApiKey.none());
    }

    /** The one call the Mono emits; fails the test if it emits none, several, or an error. */
    static <T> EngineCall<T> call(Mono<EngineCall<T>> mono) {
        AtomicReference<EngineCall<T>> result = new AtomicReference<>();
        StepVerifier.create(mono).consumeNextWith(result::set).expectComplete().verify(Duration.ofSeconds(30));
        return result.get();
    }

    static <T> T success(Mono<EngineCall<T>> mono) {
        return switch (call(mono)) {
            case EngineCall.Success<T> success -> success.value();
            case EngineCall.Failure<T> failure -> throw new AssertionError("expected a success, got " + failure);
        };
    }

    static <T> EngineFailure failure(Mono<EngineCall<T>> mono) {
        return switch (call(mono)) {
            case EngineCall.Success<T> success -> throw new AssertionError("expected a failure, got " + success);
            case EngineCall.Failure<T> failure -> failure.failure();
        };
    }
}
