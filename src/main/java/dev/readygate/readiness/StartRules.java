package dev.readygate.readiness;

import dev.readygate.readiness.EngineState.Down;
import dev.readygate.readiness.EngineState.ShuttingDown;
import dev.readygate.readiness.EngineState.Sleeping;
import dev.readygate.readiness.EngineState.Starting;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Where engine starts begin and end, decided from one state change: a pure function beside {@link ReadinessRules}.
 *
 * <p>A start is one engine process, from its start-up header in the log (or, without one, the first state in which it
 * answers) until it goes away, restarts or readygate stops. The engine log begins a start before the port opens
 * ({@link Observation.ProcessStarted}: vLLM binds once initialized) and ends one that dies before serving
 * ({@link Observation.StartFailed}); such a start lives through {@link Down} until it listens. Otherwise there is no
 * start while nothing answers ({@link Starting}, {@link Down}): the first state that answers after those begins one,
 * dated by when the old engine was seen going away after {@code Down}, by when it was first seen after
 * {@code Starting} (the first start readygate sees). Going {@code Down} from a state that answered ends the start, and
 * so does readygate stopping ({@link ShuttingDown}). A {@link Observation.Restarted} (a new process readygate did not
 * see go away) ends the start and begins the next at once, dated by the new process's start time when the observation
 * carries it; so does a new process's header in the log while a start runs, and an engine that says it is loading its
 * model again ({@link Reason#ENGINE_LOADING}, llama.cpp's 503) after it had answered {@code /health}: a new process on
 * the port that readygate did not see go away. An engine that falls asleep (vLLM's sleep mode, {@link Sleeping}) ends
 * its start, and none runs while it sleeps; its wake ({@link Observation.Awake}) begins one ({@link EngineStart#wake()},
 * dated {@link StartSource#WAKE}): the same process, serving again only once verified. Any other change keeps the
 * start.
 *
 * <p>A start that began before readygate's first look is first seen ({@link EngineStart#firstSeen()}): not an engine
 * restart, unless the engine says at that look that it is still loading its model (llama.cpp's 503), which is a start
 * readygate sees before it served, as a refused port is for vLLM.
 */
final class StartRules {

    private StartRules() {}

    /**
     * Whether an observation concerns the start the engine is in: the log's observations name the start they follow or
     * end, and one about a start that is no longer current (another began or ended meanwhile) changes nothing. Every
     * probe observation concerns the current start.
     */
    static boolean concerns(@Nullable EngineStart start, Observation observation) {
        return switch (observation) {
            // A header after start `follows` (or after none): unless that start is still current or none is, another
            // start began meanwhile, and the header is that start's own.
            case Observation.ProcessStarted p ->
                start == null || p.follows() != null && p.follows().equals(start.id());
            case Observation.StartFailed f -> start != null && f.startId().equals(start.id());
            default -> true;
        };
    }

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
        if (current instanceof ShuttingDown) {
            return null;
        }
        switch (cause) {
            case Observation.ProcessStarted p -> {
                return p.loggedAt() == null
                        ? new EngineStart(ids.get(), p.at(), StartSource.FIRST_OBSERVED, p.inProgress())
                        : new EngineStart(ids.get(), p.loggedAt(), StartSource.LOG, p.inProgress());
            }
            case Observation.StartFailed f -> {
                return null;
            }
            case Observation.Restarted restarted -> {
                return restarted.processStart() == null
                        ? new EngineStart(ids.get(), current.since(), StartSource.FIRST_OBSERVED, false)
                        : new EngineStart(ids.get(), restarted.processStart(), StartSource.PROCESS_START_TIME, false);
            }
            default -> {}
        }
        if (current instanceof Sleeping) {
            // Falling asleep ends the start that served (its record's stop says it slept); nothing starts while asleep.
            return null;
        }
        if (previous instanceof Sleeping sleeping && cause instanceof Observation.Awake awake) {
            // The same process serves again: a wake, a start of its own, verified and recorded as one.
            return new EngineStart(
                    ids.get(),
                    awake.at(),
                    StartSource.WAKE,
                    false,
                    new EngineStart.Slept(sleeping.level(), sleeping.since(), awake.at()));
        }
        if (current instanceof Starting) {
            return null;
        }
        if (current instanceof Down) {
            // From a state that answered, the engine went away; a start the log began and that never answered yet
            // is still loading.
            return answers(previous) ? null : start;
        }
        if (start != null && loadingAgain(previous, current)) {
            return new EngineStart(ids.get(), current.since(), StartSource.FIRST_OBSERVED, false);
        }
        if (start != null) {
            return start;
        }
        return switch (previous) {
            case Down down -> new EngineStart(ids.get(), down.since(), StartSource.OBSERVED_DOWN, false);
            // The engine says it is loading its model (llama.cpp's 503) at readygate's first look: a start readygate
            // sees before it served, as a refused port is for vLLM; anything else that answers was up already.
            case Starting starting ->
                new EngineStart(ids.get(), current.since(), StartSource.FIRST_OBSERVED, !loading(current));
            default -> new EngineStart(ids.get(), current.since(), StartSource.FIRST_OBSERVED, false);
        };
    }

    /** Whether the engine answered in {@code state}: anything but {@link Starting}, {@link Down}, {@link ShuttingDown}. */
    static boolean answers(EngineState state) {
        return !(state instanceof Starting || state instanceof Down || state instanceof ShuttingDown);
    }

    private static boolean loading(EngineState state) {
        return state instanceof EngineState.Listening listening && listening.cause() == Reason.ENGINE_LOADING;
    }

    /** Loading after the engine had passed {@code /health}: only a new process loads its model. */
    private static boolean loadingAgain(EngineState previous, EngineState current) {
        boolean loading = loading(current);
        boolean pastLoading = !(previous instanceof EngineState.Listening
                || previous instanceof Starting
                || previous instanceof Down
                || previous instanceof ShuttingDown);
        return loading && pastLoading;
    }
}
