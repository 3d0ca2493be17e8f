package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.gateway.TrafficJudge.Verdict;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link TrafficHealth} as stories: verdicts in the order their exchanges ended, and where the fold stands after. */
class TrafficHealthTests {

    static final Instant T0 = Instant.parse("2026-12-03T12:00:00Z");

    /** An exchange from T0 + {@code from} s to T0 + {@code to} s. */
    static Verdict v(TrafficOutcome outcome, int from, int to) {
        return new Verdict(
                outcome, outcome.value(), T0.plusSeconds(from), T0.plusSeconds(to), outcome == TrafficOutcome.SUCCESS);
    }

    static Verdict ok(int from, int to) {
        return v(TrafficOutcome.SUCCESS, from, to);
    }

    static Verdict fail(int from, int to) {
        return v(TrafficOutcome.ERROR_EVENT, from, to);
    }

    /** Folds the verdicts; returns the final state. */
    static TrafficHealth.State fold(List<Verdict> verdicts) {
        TrafficHealth.State state = TrafficHealth.initial();
        for (Verdict verdict : verdicts) {
            state = TrafficHealth.next(state, verdict);
        }
        return state;
    }

    /** A story: the verdicts, then the failures open and proven at which second. */
    record Story(
            String name,
            List<Verdict> verdicts,
            int failures,
            @Nullable Integer provenAtSecond) {

        @Override
        public String toString() {
            return name;
        }
    }

    static Story story(String name, List<Verdict> verdicts, int failures, @Nullable Integer provenAt) {
        return new Story(name, verdicts, failures, provenAt);
    }

    static Stream<Story> stories() {
        return Stream.of(
                story("successes prove the engine", List.of(ok(0, 2), ok(1, 5)), 0, 5),
                story("failures in a row are counted", List.of(fail(0, 1), fail(0, 2), fail(0, 3)), 3, null),
                story(
                        "a GPU fault fails every stream in flight: each is counted",
                        List.of(fail(0, 10), fail(1, 10), fail(2, 10), fail(3, 10), fail(4, 10)),
                        5,
                        null),
                story(
                        "a success sent after the latest failure ends the run",
                        List.of(fail(0, 1), fail(0, 2), ok(3, 4), fail(5, 6), fail(5, 7)),
                        2,
                        null),
                story(
                        "a success admitted before the latest failure does not end the run",
                        List.of(fail(5, 10), fail(6, 11), ok(1, 12), fail(7, 13)),
                        3,
                        null),
                story(
                        "a success admitted before a failure that ended earlier does end the run",
                        List.of(ok(0, 2), fail(1, 3), ok(4, 6)),
                        0,
                        6),
                story(
                        "a failure withdraws the proof until a success proves again",
                        List.of(ok(0, 2), fail(3, 4)),
                        1,
                        null),
                story(
                        "client faults and busy answers change nothing",
                        List.of(
                                fail(0, 1),
                                v(TrafficOutcome.CLIENT_ERROR, 1, 2),
                                v(TrafficOutcome.CLIENT_CANCELLED, 1, 2),
                                v(TrafficOutcome.CLIENT_ERROR_EVENT, 1, 2),
                                v(TrafficOutcome.BUSY, 1, 2),
                                v(TrafficOutcome.NOT_JUDGED, 1, 2),
                                fail(2, 3)),
                        2,
                        null),
                story("a refused connection is a failure", List.of(ok(0, 1), v(TrafficOutcome.REFUSED, 2, 2)), 1, null),
                story(
                        "every kind of engine failure counts",
                        List.of(
                                v(TrafficOutcome.STALLED, 0, 1),
                                v(TrafficOutcome.TRUNCATED_STREAM, 0, 2),
                                v(TrafficOutcome.FIRST_BYTE_TIMEOUT, 0, 3)),
                        3,
                        null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stories")
    void nextFollowsTheStory(Story story) {
        TrafficHealth.State state = fold(story.verdicts());
        assertThat(state.failures()).as(story.name()).isEqualTo(story.failures());
        assertThat(state.provenAt())
                .as(story.name())
                .isEqualTo(story.provenAtSecond() == null ? null : T0.plusSeconds(story.provenAtSecond()));
    }

    @Test
    void nextKeepsTheLatestFailureToEnd() {
        TrafficHealth.State state = fold(List.of(fail(0, 1), v(TrafficOutcome.STALLED, 0, 5), fail(0, 3)));
        assertThat(state.lastFailure()).isNotNull();
        assertThat(state.lastFailure().outcome()).isEqualTo(TrafficOutcome.STALLED);
    }

    @Test
    void nextWhenSuccessProvesNoGenerationEndsTheRunWithoutProof() {
        Verdict models = new Verdict(TrafficOutcome.SUCCESS, "HTTP 200", T0.plusSeconds(2), T0.plusSeconds(3), false);
        TrafficHealth.State state = fold(List.of(fail(0, 1), models));
        assertThat(state.failures()).isZero();
        assertThat(state.provenAt()).isNull();
    }
}
