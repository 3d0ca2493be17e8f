package dev.readygate.readiness;

import dev.readygate.readiness.EngineState.Down;
import dev.readygate.readiness.EngineState.ShuttingDown;
import dev.readygate.readiness.EngineState.Starting;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Where engine starts begin and end, decided from one state change: a pure function beside {@link ReadinessRules}.
 *
 * <p>There is no start while nothing answers ({@link Starting}, {@link Down}) or once readygate stops
 * ({@link ShuttingDown}): going there ends the start. The first state after those begins one: after {@code Down} it is
 * dated by when the old engine was seen going away, after {@code Starting} by when it was first seen (the first start
 * readygate sees). A {@link Observation.Restarted} (a new process readygate did not see go away) ends the start and
 * begins the next at once, dated by the new process's start time when the observation carries it. So does an engine
 * that says it is loading its model again ({@link Reason#ENGINE_LOADING}, llama.cpp's 503) after it had answered
 * {@code /health}: a new process on the port that readygate did not see go away. Any other change keeps the start.
 */
final class StartRules {

    private StartRules() {}

    /**
     * The start the engine is in once {@code previous} became {@code current} through {@code cause}.
     *
     * @param start the start before the change, or null
     * @param ids stamps a start that begins (called only then)
     */
    public static @Nullable EngineStart next(
            @Nullable EngineStart start,
            EngineState previous,
            EngineState current,
            Observation cause,
            Supplier<String> ids) {
        if (current instanceof Starting || current instanceof Down || current instanceof ShuttingDown) {
            return null;
        }
        if (cause instanceof Observation.Restarted restarted) {
            return restarted.processStart() == null
                    ? new EngineStart(ids.get(), current.since(), StartSource.FIRST_OBSERVED, false)
                    : new EngineStart(ids.get(), restarted.processStart(), StartSource.PROCESS_START_TIME, false);
        }
        if (start != null && loadingAgain(previous, current)) {
            return new EngineStart(ids.get(), current.since(), StartSource.FIRST_OBSERVED, false);
        }
        if (start != null) {
            return start;
        }
        return switch (previous) {
            case Down down -> new EngineStart(ids.get(), down.since(), StartSource.OBSERVED_DOWN, false);
            case Starting starting -> new EngineStart(ids.get(), current.since(), StartSource.FIRST_OBSERVED, true);
            default -> new EngineStart(ids.get(), current.since(), StartSource.FIRST_OBSERVED, false);
        };
    }

    /** Loading after the engine had passed {@code /health}: only a new process loads its model. */
    private static boolean loadingAgain(EngineState previous, EngineState current) {
        boolean loading =
                current instanceof EngineState.Listening listening && listening.cause() == Reason.ENGINE_LOADING;
        boolean pastLoading = !(previous instanceof EngineState.Listening
                || previous instanceof Starting
                || previous instanceof Down
                || previous instanceof ShuttingDown);
        return loading && pastLoading;
    }
}
