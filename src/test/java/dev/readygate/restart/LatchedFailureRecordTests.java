package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.readygate.probe.EngineFacts;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.Reason;
import java.net.http.HttpClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/**
 * A start whose verification failed for good (a latched canary mismatch) is recorded while its engine is up, and
 * written again once it ends. The second writing keeps what the start's own log said: by the time the stop is seen,
 * the log may already hold the next start's header, which begins a new window. It used to read that window and
 * turned a cache hit with wrong weights into {@code unknown} (seen in the demo scenario's test, four times as fast).
 */
class LatchedFailureRecordTests {

    static final String MODEL = "Qwen/Qwen3-0.6B";
    static final Instant T0 = Instant.parse("2026-11-30T10:00:00Z");

    /** What the engine's log says about the current start. */
    volatile LogFindings log = findings(339);

    final List<RestartRecord> written = new CopyOnWriteArrayList<>();

    final RestartTracker tracker = new RestartTracker(
            new EngineFacts(),
            new StartLog() {
                @Override
                public LogFindings current() {
                    return log;
                }

                @Override
                public void newStart() {}
            },
            new EvidenceSources(
                    null, null, null, null, HttpClient.newHttpClient(), JsonMapper.shared(), Schedulers.immediate()),
            List.of(),
            written::add,
            List.of(),
            Clock.fixed(T0, ZoneOffset.UTC),
            "hash",
            "test",
            Map.of(),
            Duration.ofMinutes(10),
            5,
            Mono::empty,
            Duration.ZERO);

    EngineState state = new EngineState.Starting(T0);

    /** A start's findings: its header, and {@code mapped} tensors from the weight cache daemon unless 0. */
    static LogFindings findings(int mapped) {
        return new LogFindings(
                true,
                T0,
                true,
                "0.31.0",
                null,
                null,
                null,
                null,
                mapped == 0 ? null : mapped,
                mapped == 0 ? null : "zero_copy",
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                false,
                null,
                null);
    }

    void to(EngineState next) {
        EngineState previous = state;
        state = next;
        tracker.onEngineStateChanged(new EngineStateChanged(previous, next, new Observation.HealthOk(next.since())));
    }

    @Test
    void aLatchedFailureKeepsItsAttributionWhenItsStartEnds() {
        Instant at = T0.plusSeconds(10);
        to(new EngineState.Healthy(at, Reason.MODEL_NOT_LISTED, ""));
        to(new EngineState.ModelListed(at, MODEL, Reason.NOT_VERIFIED));
        to(new EngineState.VerificationFailed(
                at.plusMillis(500), MODEL, Reason.CANARY_MISMATCH, "canary probe: expected ...", true, 1));
        await().until(() -> written.size() == 1);
        assertThat(written.getFirst().path()).isEqualTo(RestartPath.PRELOAD_HIT);

        // The next start's header is read before the stop is seen: the log's current window is the next start's.
        log = findings(0);
        to(new EngineState.Down(T0.plusSeconds(15), Reason.ENGINE_DOWN, "/health: connection refused"));

        await().until(() -> written.size() == 2);
        RestartRecord ended = written.getLast();
        assertThat(ended.id()).isEqualTo(written.getFirst().id());
        assertThat(ended.path()).as("%s", ended.evidence()).isEqualTo(RestartPath.PRELOAD_HIT);
        assertThat(ended.evidence()).anyMatch(line -> line.startsWith("log: Mapped 339 tensors"));
    }
}
