package dev.readygate.restart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.probe.ProbeKind;
import dev.readygate.probe.ProbeReport;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.ReadinessRules;
import dev.readygate.readiness.Reason;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The restart timeline as a table: each row is what happens to the engine (observations the state machine turns into
 * state changes, and heavy probe reports), the verdicts the fold asks to record, and the phases of the start in
 * progress at the end. Times are seconds after T0; starts are stamped s1, s2, ...
 */
class RestartTimelineTests {

    static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");
    static final String MODEL = "Qwen/Qwen3-0.6B";

    static Instant t(int seconds) {
        return T0.plusSeconds(seconds);
    }

    static Observation down(int s) {
        return new Observation.Unreachable(t(s), Reason.ENGINE_DOWN, "/health: connection refused");
    }

    static Observation dead(int s) {
        return new Observation.EngineDead(t(s), "/health: 503");
    }

    static Observation ok(int s) {
        return new Observation.HealthOk(t(s));
    }

    static Observation failing(int s) {
        return new Observation.CheckFailed(t(s), Reason.HEALTH_FAILED, "/health: timed out");
    }

    static Observation listed(int s) {
        return new Observation.ModelListed(t(s), MODEL);
    }

    static Observation verified(int s) {
        return new Observation.Verified(t(s), "ok");
    }

    static Observation slow(int s) {
        return new Observation.VerificationFailed(t(s), Reason.SLOW, "ttft 3 s", false);
    }

    static Observation mismatched(int s) {
        return new Observation.VerificationFailed(t(s), Reason.CANARY_MISMATCH, "wrong answer", true);
    }

    static Observation restarted(int s) {
        return new Observation.Restarted(t(s), "process_start_time_seconds changed", t(s - 1));
    }

    /** A new server process's header in the engine log, read at {@code s}, after start {@code follows}. */
    static Observation header(int s, String follows) {
        return new Observation.ProcessStarted(t(s), t(s), follows, false, "engine log: a new engine process started");
    }

    static Observation startFailed(int s, String start) {
        return new Observation.StartFailed(t(s), start, "torch.OutOfMemoryError: CUDA out of memory.");
    }

    static Observation shutdown(int s) {
        return new Observation.ShutdownRequested(t(s));
    }

    static ProbeReport passed(ProbeKind kind, int s) {
        return ProbeReport.passed(kind, t(s), "ok", null, null);
    }

    static ProbeReport canaryMismatch(int s) {
        return ProbeReport.failed(ProbeKind.CANARY, t(s), Reason.CANARY_MISMATCH, "wrong answer")
                .latch();
    }

    static Observation asleep(int s, int level) {
        return new Observation.Asleep(t(s), level, "vllm:engine_sleep_state");
    }

    static Observation awake(int s) {
        return new Observation.Awake(t(s), "vllm:engine_sleep_state: awake");
    }

    static Stream<Arguments> timelines() {
        ProbeKind rep = ProbeKind.REPRESENTATIVE;
        ProbeKind canary = ProbeKind.CANARY;
        return Stream.of(
                Arguments.of(
                        "a sleep stops the start that served; its wake is a start verified as one, from the engine"
                                + " awake",
                        List.of(
                                ok(1),
                                listed(1),
                                verified(2),
                                asleep(10, 1),
                                asleep(11, 1),
                                awake(40),
                                passed(rep, 41),
                                passed(canary, 42),
                                verified(42)),
                        List.of("s1 ready", "s1 slept@10", "s2 ready"),
                        "port_listening@40 health_ok@40 model_listed@40 representative_ok@41 canary_ok@42 ready@42"),
                Arguments.of(
                        "a wake that serves other answers is judged not ready at its canary mismatch",
                        List.of(
                                ok(1),
                                listed(1),
                                verified(2),
                                asleep(10, 2),
                                awake(40),
                                canaryMismatch(41),
                                mismatched(41)),
                        List.of(
                                "s1 ready",
                                "s1 slept@10",
                                "s2 canary_mismatch",
                                "s2 not_ready(canary_mismatch) for now"),
                        "port_listening@40 health_ok@40 model_listed@40"),
                Arguments.of(
                        "an engine that dies asleep ends no start: its sleep ended it",
                        List.of(ok(1), listed(1), verified(2), asleep(10, 1), down(20), ok(30)),
                        List.of("s1 ready", "s1 slept@10"),
                        "port_listening@30 health_ok@30"),
                Arguments.of(
                        "a start verified ready is judged ready once, with every phase",
                        List.of(
                                down(0),
                                ok(2),
                                listed(3),
                                passed(rep, 4),
                                passed(canary, 5),
                                verified(5),
                                verified(65)),
                        List.of("s1 ready"),
                        "port_listening@2 health_ok@2 model_listed@3 representative_ok@4 canary_ok@5 ready@5"),
                Arguments.of(
                        "a port that listens before /health passes is its own phase",
                        List.of(failing(1), ok(3), listed(3), verified(4)),
                        List.of("s1 ready"),
                        "port_listening@1 health_ok@3 model_listed@3 ready@4"),
                Arguments.of(
                        "a start that goes away before it is verified is not ready for good, with its last reason",
                        List.of(ok(1), listed(2), down(3)),
                        List.of("s1 not_ready(not_verified)", "s1 went_away@3"),
                        ""),
                Arguments.of(
                        "a ready start that goes away is judged once only",
                        List.of(ok(1), listed(1), verified(2), down(9)),
                        List.of("s1 ready", "s1 went_away@9"),
                        ""),
                Arguments.of(
                        "a latched failure is not ready for now; when the engine goes, for good",
                        List.of(ok(1), listed(1), canaryMismatch(2), mismatched(2), down(9)),
                        List.of(
                                "s1 canary_mismatch",
                                "s1 not_ready(canary_mismatch) for now",
                                "s1 not_ready(canary_mismatch)",
                                "s1 went_away@9"),
                        ""),
                Arguments.of(
                        "a failure that does not latch judges nothing",
                        List.of(ok(1), listed(1), slow(2)),
                        List.of(),
                        "port_listening@1 health_ok@1 model_listed@1"),
                Arguments.of(
                        "a canary mismatch is told once per start",
                        List.of(
                                ok(1),
                                listed(1),
                                canaryMismatch(2),
                                canaryMismatch(3),
                                down(5),
                                ok(7),
                                canaryMismatch(8)),
                        List.of(
                                "s1 canary_mismatch",
                                "s1 not_ready(not_verified)",
                                "s1 went_away@5",
                                "s2 canary_mismatch"),
                        "port_listening@7 health_ok@7"),
                Arguments.of(
                        "a restart nobody saw ends the start and begins the next, already healthy",
                        List.of(ok(1), listed(1), verified(2), restarted(30), listed(31), verified(32)),
                        List.of("s1 ready", "s1 replaced@30", "s2 ready"),
                        "port_listening@30 health_ok@30 model_listed@31 ready@32"),
                Arguments.of(
                        "a restart before readiness judges the old start not ready",
                        List.of(ok(1), listed(1), restarted(5)),
                        List.of("s1 not_ready(not_verified)", "s1 replaced@5"),
                        "port_listening@5 health_ok@5"),
                Arguments.of(
                        "readygate stopping ends the start in progress, without a stop: the engine may go on",
                        List.of(ok(1), listed(1), shutdown(4)),
                        List.of("s1 not_ready(not_verified)"),
                        ""),
                Arguments.of(
                        "a dead engine ends its start like a gone one",
                        List.of(ok(1), listed(1), verified(2), dead(5), ok(8)),
                        List.of("s1 ready", "s1 went_away@5"),
                        "port_listening@8 health_ok@8"),
                Arguments.of(
                        "a start the log began loads without phases until its port opens",
                        List.of(down(0), header(1, null), down(2), ok(5), listed(5), verified(6)),
                        List.of("s1 ready"),
                        "port_listening@5 health_ok@5 model_listed@5 ready@6"),
                Arguments.of(
                        "a start vLLM says failed before serving is judged failed, with start_failed",
                        List.of(down(0), header(1, null), down(2), startFailed(3, "s1"), down(4)),
                        List.of("s1 failed(start_failed)"),
                        ""),
                Arguments.of(
                        "starts failing in a row are each judged failed, once",
                        List.of(
                                header(1, null),
                                startFailed(2, "s1"),
                                startFailed(2, "s1"),
                                header(3, null),
                                startFailed(4, "s2")),
                        List.of("s1 failed(start_failed)", "s2 failed(start_failed)"),
                        ""),
                Arguments.of(
                        "a start that never listened, followed by the next header, failed without vLLM's word",
                        List.of(down(0), header(1, null), header(5, "s1")),
                        List.of("s1 failed(engine_down)"),
                        ""),
                Arguments.of(
                        "a header after a ready start is a restart the probes did not see",
                        List.of(ok(1), listed(1), verified(2), header(10, "s1"), ok(12), listed(12), verified(13)),
                        List.of("s1 ready", "s1 went_away@10", "s2 ready"),
                        "port_listening@12 health_ok@12 model_listed@12 ready@13"),
                Arguments.of(
                        "the header of a start whose port the probes saw first is that start's own",
                        List.of(down(0), ok(2), header(2, null), listed(3), verified(4)),
                        List.of("s1 ready"),
                        "port_listening@2 health_ok@2 model_listed@3 ready@4"),
                Arguments.of(
                        "readygate stopping before a start the log began listens is not a failure",
                        List.of(header(1, null), shutdown(3)),
                        List.of("s1 not_ready(engine_down)"),
                        ""),
                Arguments.of(
                        "probe reports outside a start are ignored",
                        List.of(passed(rep, 0), down(1), canaryMismatch(2)),
                        List.of(),
                        ""));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("timelines")
    void nextFoldsEngineEventsIntoPhasesAndVerdicts(
            String name, List<Object> events, List<String> verdicts, String phases) {
        List<Object> changes = new ArrayList<>();
        AtomicInteger ids = new AtomicInteger();
        EngineStateMachine machine =
                new EngineStateMachine(new ReadinessRules(1, 3), T0, changes::add, () -> "s" + ids.incrementAndGet());
        RestartTimeline timeline = RestartTimeline.NONE;
        List<String> recorded = new ArrayList<>();
        for (Object event : events) {
            if (event instanceof Observation observation) {
                machine.apply(observation);
            } else {
                changes.add(event);
            }
            for (Object change : changes) {
                RestartTimeline.Step step =
                        change instanceof EngineStateChanged c ? timeline.next(c) : timeline.next((ProbeReport) change);
                timeline = step.timeline();
                step.verdicts().forEach(verdict -> recorded.add(describe(verdict)));
            }
            changes.clear();
        }
        assertThat(recorded).as(name).containsExactlyElementsOf(verdicts);
        assertThat(describe(timeline.phases())).as(name).isEqualTo(phases);
    }

    static String describe(RestartTimeline.Verdict verdict) {
        return switch (verdict) {
            case RestartTimeline.Verdict.Judged judged ->
                judged.start().id() + " " + judged.outcome().value()
                        + (judged.reason() == null ? "" : "(" + judged.reason().value() + ")")
                        + (judged.completed() ? "" : " for now");
            case RestartTimeline.Verdict.CanaryMismatched mismatch ->
                mismatch.start().id() + " canary_mismatch";
            case RestartTimeline.Verdict.Stopped stopped ->
                stopped.start().id() + " " + stopped.how().value() + "@"
                        + Duration.between(T0, stopped.at()).toSeconds();
        };
    }

    static String describe(Map<Phase, Instant> phases) {
        return phases.entrySet().stream()
                .sorted(Map.Entry.<Phase, Instant>comparingByValue().thenComparing(Map.Entry.comparingByKey()))
                .map(phase -> phase.getKey().value() + "@"
                        + Duration.between(T0, phase.getValue()).toSeconds())
                .collect(Collectors.joining(" "));
    }
}
