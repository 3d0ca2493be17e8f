package dev.readygate.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.Observation;
import dev.readygate.readiness.Reason;
import dev.readygate.readiness.StartSource;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The log window as a table: (window, line or change) gives (window, news), with no tail, clock or lock. */
class LogWindowTests {

    static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");
    static final Duration LAG = Duration.ofMillis(700);
    static final EngineStart S1 = new EngineStart("s1", T0, StartSource.LOG, false);
    static final EngineStart S2 = new EngineStart("s2", T0.plusSeconds(20), StartSource.LOG, false);

    static LogEvent banner(Instant at) {
        return new LogEvent.ServerVersion(at, "APIServer", 1, "0.31.0");
    }

    static LogEvent serving(Instant at) {
        return new LogEvent.ApplicationStartup(at, "APIServer", 1);
    }

    static LogEvent loaded(Instant at) {
        return new LogEvent.LoadingWeights(at, "EngineCore_DP0", 94, 4.88);
    }

    /** An engine core's first line, {@code Initializing a V1 LLM engine (v0.31.0) with config: ...}. */
    static LogEvent coreBegins(Instant at, int pid) {
        return new LogEvent.ServerVersion(at, "EngineCore", pid, "0.31.0");
    }

    static LogEvent mapped(Instant at, int pid) {
        return new LogEvent.MappedFromCache(at, "EngineCore", pid, 339, "zero_copy");
    }

    static LogEvent loaded(Instant at, int pid) {
        return new LogEvent.LoadingWeights(at, "EngineCore", pid, 4.88);
    }

    static LogEvent failed(Instant at) {
        return new LogEvent.InitializationFailed(
                at, "APIServer", 1, "RuntimeError: Engine core initialization failed.");
    }

    static LogWindow.Step line(LogWindow window, LogEvent event) {
        return window.next(event, event.at());
    }

    /** A window past the backlog, following {@code start}, with {@code events} read at their own time. */
    static LogWindow live(EngineStart start, LogEvent... events) {
        LogWindow window = LogWindow.EMPTY.backlogRead(T0).window();
        window = window.next(began(start), T0, LAG).window();
        for (LogEvent event : events) {
            window = line(window, event).window();
        }
        return window;
    }

    static EngineStateChanged began(EngineStart start) {
        EngineState down = new EngineState.Down(T0, Reason.ENGINE_DOWN, "refused");
        return new EngineStateChanged(down, down, new Observation.ProcessStarted(T0, T0, null, false, ""), null, start);
    }

    /** Readiness saw S1's process replaced by S2's, 20 s in. */
    static EngineStateChanged restarted() {
        return new EngineStateChanged(
                new EngineState.Ready(T0, "m"),
                new EngineState.Healthy(T0.plusSeconds(20), Reason.ENGINE_RESTARTED, ""),
                new Observation.Restarted(T0.plusSeconds(20), "", T0.plusSeconds(20)),
                S1,
                S2);
    }

    /**
     * SGLang's fast restart: S1 served and was verified at 8 s; its "fired up" line (after its own warmup, with
     * /health's first 200) was read at 9.5 s; it went away at 10 s, and S2 began at 10.2 s, before its header was read.
     */
    static LogWindow firedUpThenRestarted() {
        LogWindow window = live(S1, banner(T0), loaded(T0.plusSeconds(5)), serving(T0.plusSeconds(7)));
        window = window.next(
                        new EngineStateChanged(
                                new EngineState.Healthy(T0.plusSeconds(7), Reason.ENGINE_RESTARTED, ""),
                                new EngineState.Ready(T0.plusSeconds(8), "m"),
                                new Observation.Verified(T0.plusSeconds(8), ""),
                                S1,
                                S1),
                        T0.plusSeconds(8),
                        LAG)
                .window();
        window = line(window, serving(T0.plusMillis(9_500))).window();
        window = window.next(wentAway(S1, T0.plusSeconds(10)), T0.plusSeconds(10), LAG)
                .window();
        EngineStart s2 = new EngineStart("s2", T0.plusMillis(10_200), StartSource.LOG, false);
        return window.next(began(s2), T0.plusMillis(10_200), LAG).window();
    }

    static EngineStateChanged wentAway(EngineStart start, Instant at) {
        return new EngineStateChanged(
                new EngineState.Ready(T0, "m"),
                new EngineState.Down(at, Reason.ENGINE_DOWN, "refused"),
                new Observation.Unreachable(at, Reason.ENGINE_DOWN, "refused"),
                start,
                null);
    }

    static Stream<Arguments> steps() {
        return Stream.of(
                Arguments.of(
                        "a header before the backlog was read tells nothing",
                        (Function<LogWindow.Step, Object>) step -> step.news(),
                        line(LogWindow.EMPTY, banner(T0)),
                        List.of()),
                Arguments.of(
                        "a header while no start is known tells a new start",
                        (Function<LogWindow.Step, Object>) step ->
                                step.news().stream().map(Object::getClass).toList(),
                        line(LogWindow.EMPTY.backlogRead(T0).window(), banner(T0)),
                        List.of(LogWindow.News.Tell.class)),
                Arguments.of(
                        "the header of the start readiness follows, its window empty, is its own",
                        (Function<LogWindow.Step, Object>) step -> step.news(),
                        line(live(S1), banner(T0)),
                        List.of()),
                Arguments.of(
                        "a serving line read after the start was verified is its last word, not the next start's",
                        (Function<LogWindow.Step, Object>) step -> step.news(),
                        line(firedUpThenRestarted(), banner(T0.plusMillis(10_300))),
                        List.of()),
                Arguments.of(
                        "a header after the start served ends it and tells the next",
                        (Function<LogWindow.Step, Object>) step ->
                                step.news().stream().map(Object::getClass).toList(),
                        line(live(S1, banner(T0), loaded(T0.plusSeconds(5)), serving(T0.plusSeconds(8))), banner(T0)),
                        List.of(LogWindow.News.Ended.class, LogWindow.News.Tell.class)),
                Arguments.of(
                        "a header after the start served opens a window of its own",
                        (Function<LogWindow.Step, Object>)
                                step -> step.window().findings().loadingWeightsSeconds() == null,
                        line(live(S1, banner(T0), loaded(T0.plusSeconds(5))), banner(T0.plusSeconds(19))),
                        true),
                Arguments.of(
                        "vLLM's start failure is told for the start readiness follows",
                        (Function<LogWindow.Step, Object>) step -> step.news(),
                        line(live(S1, banner(T0)), failed(T0.plusSeconds(8))),
                        List.of(new LogWindow.News.Tell(new Observation.StartFailed(
                                T0.plusSeconds(8), "s1", "RuntimeError: Engine core initialization failed.")))),
                Arguments.of(
                        "an API server's ValidationError is told with pydantic's message, from the line after it",
                        (Function<LogWindow.Step, Object>) step -> step.news().stream()
                                .map(news -> ((LogWindow.News.Tell) news).observation())
                                .map(observation -> ((Observation.StartFailed) observation).detail())
                                .toList(),
                        line(
                                live(
                                        S1,
                                        banner(T0),
                                        new LogEvent.ExceptionRaised(
                                                T0.plusSeconds(2),
                                                "APIServer",
                                                1,
                                                "pydantic_core._pydantic_core.ValidationError: 1 validation error for"
                                                        + " VllmConfig")),
                                new LogEvent.ExceptionDetail(
                                        T0.plusSeconds(2),
                                        "APIServer",
                                        1,
                                        "Value error, Cannot find the config file for awq_marlin")),
                        List.of("pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig:"
                                + " Value error, Cannot find the config file for awq_marlin")),
                Arguments.of(
                        "an API server's ValidationError alone tells nothing yet: its message is on the next line",
                        (Function<LogWindow.Step, Object>) step -> step.news(),
                        line(
                                live(S1, banner(T0)),
                                new LogEvent.ExceptionRaised(
                                        T0.plusSeconds(2),
                                        "APIServer",
                                        1,
                                        "pydantic_core._pydantic_core.ValidationError: 1 validation error for"
                                                + " VllmConfig")),
                        List.of()),
                Arguments.of(
                        "vLLM's start failure is told once",
                        (Function<LogWindow.Step, Object>) step -> step.news(),
                        line(
                                line(live(S1, banner(T0)), failed(T0.plusSeconds(8)))
                                        .window(),
                                failed(T0.plusSeconds(9))),
                        List.of()),
                Arguments.of(
                        "a backlog that ends loading tells the start in progress",
                        (Function<LogWindow.Step, Object>) step ->
                                step.news().stream().map(Object::getClass).toList(),
                        line(LogWindow.EMPTY, banner(T0)).window().backlogRead(T0.plusSeconds(30)),
                        List.of(LogWindow.News.Tell.class)),
                Arguments.of(
                        "a backlog that ends serving tells nothing",
                        (Function<LogWindow.Step, Object>) step -> step.news(),
                        line(line(LogWindow.EMPTY, banner(T0)).window(), serving(T0))
                                .window()
                                .backlogRead(T0.plusSeconds(30)),
                        List.of()),
                Arguments.of(
                        "the engine going away closes the start with its findings",
                        (Function<LogWindow.Step, Object>) step -> step.news(),
                        live(S1, loaded(T0.plusSeconds(5)))
                                .next(wentAway(S1, T0.plusSeconds(10)), T0.plusSeconds(10), LAG),
                        List.of(new LogWindow.News.Ended(
                                "s1", live(S1, loaded(T0.plusSeconds(5))).findings()))),
                Arguments.of(
                        "the engine going away keeps only the lines read within the lag",
                        (Function<LogWindow.Step, Object>)
                                step -> step.window().events().size(),
                        live(
                                        S1,
                                        loaded(T0.plusSeconds(5)),
                                        banner(T0.plusSeconds(9).plusMillis(500)))
                                .next(wentAway(S1, T0.plusSeconds(10)), T0.plusSeconds(10), LAG),
                        1),
                Arguments.of(
                        "without a header, an engine core of a new pid closes the window: the next start's lines",
                        (Function<LogWindow.Step, Object>) step -> List.of(
                                step.window().findings().mappedTensors() == null,
                                step.window().closedByHeader().mappedTensors()),
                        line(
                                live(S1, coreBegins(T0, 95), mapped(T0.plusSeconds(2), 95)),
                                loaded(T0.plusSeconds(9), 96)),
                        List.of(true, 339)),
                Arguments.of(
                        "without a header, a core loading again after its server served is a new start, same pids",
                        (Function<LogWindow.Step, Object>)
                                step -> step.window().findings().mappedTensors() == null,
                        line(
                                live(S1, coreBegins(T0, 95), mapped(T0.plusSeconds(2), 95), serving(T0.plusSeconds(3))),
                                coreBegins(T0.plusSeconds(60), 95)),
                        true),
                Arguments.of(
                        "a replaced engine core writing again is another engine's: kept out, and named",
                        (Function<LogWindow.Step, Object>) step -> List.of(
                                step.window().findings().loadingWeightsSeconds() == null,
                                step.window().findings().otherEngine() != null),
                        line(
                                live(S1, coreBegins(T0, 95), coreBegins(T0.plusSeconds(1), 96)),
                                loaded(T0.plusSeconds(5), 95)),
                        List.of(true, true)),
                Arguments.of(
                        "the start readiness saw end keeps the lines before a headerless new process",
                        (Function<LogWindow.Step, Object>) step -> step.news().stream()
                                .map(news ->
                                        ((LogWindow.News.Ended) news).findings().mappedTensors())
                                .toList(),
                        live(S1, coreBegins(T0, 95), mapped(T0.plusSeconds(2), 95), loaded(T0.plusSeconds(19), 96))
                                .next(restarted(), T0.plusSeconds(20), LAG),
                        List.of(339)),
                Arguments.of(
                        "a change follows the start readiness is in",
                        (Function<LogWindow.Step, Object>) step -> step.window().startId(),
                        live(S1).next(restarted(), T0.plusSeconds(20), LAG),
                        "s2"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("steps")
    void step(String rule, Function<LogWindow.Step, Object> aspect, LogWindow.Step step, Object expected) {
        assertThat(aspect.apply(step)).isEqualTo(expected);
    }
}
