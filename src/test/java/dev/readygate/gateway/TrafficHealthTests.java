package dev.readygate.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.gateway.TrafficJudge.Verdict;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link TrafficHealth} as stories: verdicts in the order their exchanges ended, and where the fold stands after. */
class TrafficHealthTests {

    static final Instant T0 = Instant.parse("2026-12-03T12:00:00Z");

    static final TrafficHealth HEALTH = new TrafficHealth(3);

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

    /** Folds the verdicts; returns the final state and the indexes of the verdicts that took the engine out. */
    static Result fold(List<Verdict> verdicts) {
        TrafficHealth.State state = TrafficHealth.initial();
        List<Integer> takenOut = new ArrayList<>();
        for (int i = 0; i < verdicts.size(); i++) {
            TrafficHealth.Step step = HEALTH.next(state, verdicts.get(i));
            if (step.takeOut()) {
                takenOut.add(i);
            }
            state = step.state();
        }
        return new Result(state, takenOut);
    }

    record Result(TrafficHealth.State state, List<Integer> takenOut) {}

    /** A story: the verdicts, then the failures open, out or not, which verdicts took it out, proven at which second. */
    record Story(
            String name,
            List<Verdict> verdicts,
            int failures,
            boolean out,
            List<Integer> takenOutAt,
            @Nullable Integer provenAtSecond) {

        @Override
        public String toString() {
            return name;
        }
    }

    static Story story(
            String name,
            List<Verdict> verdicts,
            int failures,
            boolean out,
            List<Integer> takenOutAt,
            @Nullable Integer provenAt) {
        return new Story(name, verdicts, failures, out, takenOutAt, provenAt);
    }

    static Stream<Story> stories() {
        return Stream.of(
                story("successes prove the engine", List.of(ok(0, 2), ok(1, 5)), 0, false, List.of(), 5),
                story(
                        "three failures in a row take it out at the third",
                        List.of(fail(0, 1), fail(0, 2), fail(0, 3)),
                        3,
                        true,
                        List.of(2),
                        null),
                story(
                        "a GPU fault fails every stream in flight: out at the third to end, once",
                        List.of(fail(0, 10), fail(1, 10), fail(2, 10), fail(3, 10), fail(4, 10)),
                        3,
                        true,
                        List.of(2),
                        null),
                story(
                        "a success sent after the latest failure ends the run",
                        List.of(fail(0, 1), fail(0, 2), ok(3, 4), fail(5, 6), fail(5, 7)),
                        2,
                        false,
                        List.of(),
                        null),
                story(
                        "a success admitted before the latest failure does not end the run",
                        List.of(fail(5, 10), fail(6, 11), ok(1, 12), fail(7, 13)),
                        3,
                        true,
                        List.of(3),
                        null),
                story(
                        "a success admitted before a failure that ended earlier does end the run",
                        List.of(ok(0, 2), fail(1, 3), ok(4, 6)),
                        0,
                        false,
                        List.of(),
                        6),
                story(
                        "a failure withdraws the proof until a success proves again",
                        List.of(ok(0, 2), fail(3, 4)),
                        1,
                        false,
                        List.of(),
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
                        false,
                        List.of(),
                        null),
                story(
                        "a refused connection takes it out at once",
                        List.of(ok(0, 1), v(TrafficOutcome.REFUSED, 2, 2)),
                        1,
                        true,
                        List.of(1),
                        null),
                story(
                        "once out, nothing brings it back but a new start",
                        List.of(fail(0, 1), fail(0, 2), fail(0, 3), ok(4, 5), fail(6, 7)),
                        3,
                        true,
                        List.of(2),
                        null),
                story(
                        "every kind of engine failure counts",
                        List.of(
                                v(TrafficOutcome.STALLED, 0, 1),
                                v(TrafficOutcome.TRUNCATED_STREAM, 0, 2),
                                v(TrafficOutcome.FIRST_BYTE_TIMEOUT, 0, 3)),
                        3,
                        true,
                        List.of(2),
                        null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stories")
    void nextFollowsTheStory(Story story) {
        Result result = fold(story.verdicts());
        assertThat(result.state().failures()).as(story.name()).isEqualTo(story.failures());
        assertThat(result.state().out()).as(story.name()).isEqualTo(story.out());
        assertThat(result.takenOut()).as(story.name()).isEqualTo(story.takenOutAt());
        assertThat(result.state().provenAt())
                .as(story.name())
                .isEqualTo(story.provenAtSecond() == null ? null : T0.plusSeconds(story.provenAtSecond()));
    }

    @Test
    void nextWhenTakenOutNamesTheFailureThatDidIt() {
        Result result = fold(List.of(fail(0, 1), fail(0, 2), v(TrafficOutcome.STALLED, 0, 3)));
        assertThat(result.state().lastFailure()).isNotNull();
        assertThat(result.state().lastFailure().outcome()).isEqualTo(TrafficOutcome.STALLED);
    }

    @Test
    void nextWhenSuccessProvesNoGenerationEndsTheRunWithoutProof() {
        Verdict models = new Verdict(TrafficOutcome.SUCCESS, "HTTP 200", T0.plusSeconds(2), T0.plusSeconds(3), false);
        Result result = fold(List.of(fail(0, 1), models));
        assertThat(result.state().failures()).isZero();
        assertThat(result.state().provenAt()).isNull();
    }
}
