package dev.readygate;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** BlockHound is active in every test JVM: a blocking call on a non-blocking thread fails loudly. */
class BlockHoundTests {

    @Test
    void blockingOnAReactorThreadIsReported() {
        StepVerifier.create(Mono.delay(Duration.ofMillis(1)).doOnNext(tick -> {
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                }))
                .expectError(BlockingOperationError.class)
                .verify(Duration.ofSeconds(5));
    }
}
