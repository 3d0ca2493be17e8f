package dev.readygate;

import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * An HTTP status read without asserting it, for tests that wait for an answer: a {@code WebTestClient} expectation
 * that fails logs "ERROR ... Request details for assertion failure" before it throws, so retrying one prints a block
 * per miss in a run that passes ({@link QuietPassingRunTests}).
 */
public final class HttpStatusPoll {

    private HttpStatusPoll() {}

    /** The status {@code path} answers a GET with; whatever a failed connection throws, it throws. */
    public static int statusOf(WebTestClient client, String path) {
        return client.get()
                .uri(path)
                .exchange()
                .expectBody()
                .returnResult()
                .getStatus()
                .value();
    }
}
