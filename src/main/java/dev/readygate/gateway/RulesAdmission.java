package dev.readygate.gateway;

import dev.readygate.readiness.EngineStart;
import dev.readygate.readiness.EngineState;
import dev.readygate.readiness.EngineStateChanged;
import dev.readygate.readiness.EngineStateMachine;
import dev.readygate.restart.RestartPath;
import dev.readygate.restart.RestartRecord;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.context.event.EventListener;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * The traffic port's admission, decided by {@link AdmissionRules}, and the one place its state is kept: the requests in
 * flight (each holds a {@link Admission.Ticket} until its exchange with the engine ends) and the queue of those
 * waiting. A request is forwarded while the engine's state accepts traffic (what {@code /readyz} says) and fewer than
 * {@code maxInFlight} are in flight, to the start in progress; it waits, in a queue of at most {@code maxQueued} and
 * for at most {@code maxWait}, for a free stream, through a short start ({@code hold}), or to be sent once more
 * ({@link #retry}); otherwise it is refused, with a {@code Retry-After} that says when to come back: the current
 * start's expected remainder from its provisional restart path and that path's recorded readiness latencies
 * ({@link RetryAfter}), the end of a restart-loop hold, or the rules' fixed figures.
 *
 * <p>The waiting are reconsidered, oldest first, whenever what they wait for may have come: a request's exchange
 * ended (a stream came free), the engine's state changed ({@link #reconsider()}, called on each change), a deadline
 * passed. Decisions are made under this object's lock, which is held for a few reads and no I/O; a waiting request is
 * answered outside it. A client that goes away while its request waits leaves the queue.
 */
final class RulesAdmission implements TrafficAdmission {

    /**
     * The bounds of the queue and the in-flight count.
     *
     * @param maxInFlight the most requests forwarded at once
     * @param maxQueued the most requests waiting at once
     * @param maxWait the longest one waits
     * @param hold whether requests wait through a short start
     * @param retry whether a request whose connection failed before any answer is sent once more
     */
    record Limits(int maxInFlight, int maxQueued, Duration maxWait, boolean hold, boolean retry) {

        /** No queue, no bound: every request is forwarded or refused at once. */
        static final Limits NONE = new Limits(Integer.MAX_VALUE, 0, Duration.ofSeconds(1), false, false);
    }

    /** No wait: the engine serves (read by no rule then). */
    private static final RetryAfter SERVES = new RetryAfter(Duration.ZERO, RetryAfter.Basis.NO_HISTORY);

    private final EngineStateMachine machine;
    private final Supplier<RestartPath> path;
    private final StartExpectations expectations;
    private final Limits limits;
    private final Scheduler timer;
    private final Clock clock;
    private final TrafficEvents events;
    private final ArrayDeque<Waiter> queue = new ArrayDeque<>();
    private int inFlight;
    private @Nullable Announced announced;
    /** Who waits for no request to be in flight ({@link #idle}). */
    private final List<Sinks.Empty<Void>> idle = new ArrayList<>();

    /**
     * The operator's announcement that the engine's current start is about to stop ({@code POST /gateway/drain}).
     *
     * @param startId the start that stops
     * @param until when it lapses if that start still serves (a stop that never came)
     */
    record Announced(@Nullable String startId, Instant until) {}

    /**
     * @param path the current start's provisional restart path (without I/O)
     * @param history the recorded starts, oldest first
     * @param timer where the deadlines of waiting requests run
     */
    RulesAdmission(
            EngineStateMachine machine,
            Supplier<RestartPath> path,
            Supplier<List<RestartRecord>> history,
            Limits limits,
            Scheduler timer,
            Clock clock,
            TrafficEvents events) {
        this.machine = machine;
        this.path = path;
        this.expectations = new StartExpectations(history);
        this.limits = limits;
        this.timer = timer;
        this.clock = clock;
        this.events = events;
    }

    @Override
    public Mono<Admission> admit() {
        synchronized (this) {
            Snapshot now = snapshot();
            AdmissionRules.Decision decision = AdmissionRules.decide(now.situation(inFlight, queue.size()));
            if (decision instanceof AdmissionRules.Decision.Hold hold) {
                return waiting(AdmissionRules.Waiting.held(hold));
            }
            return Mono.just(admission(decision, now.startId()));
        }
    }

    @Override
    public Mono<Admission> retry(@Nullable String failedStart) {
        if (!limits.retry()) {
            return Mono.empty();
        }
        return waiting(AdmissionRules.Waiting.retry(failedStart, clock.instant(), limits.maxWait()));
    }

    /**
     * The operator announces that the engine's current start is about to stop: from now new requests wait for the
     * next start ({@code hold}) or are refused, while those in flight run on. Lapses at the next
     * start, or after {@code maxWait} if none came.
     */
    Announced announceStop() {
        Announced now;
        synchronized (this) {
            EngineStart start = machine.start();
            now = new Announced(
                    start == null ? null : start.id(), clock.instant().plus(limits.maxWait()));
            announced = now;
        }
        timer.schedule(this::reconsider, limits.maxWait().toNanos(), TimeUnit.NANOSECONDS);
        return now;
    }

    /** The announced stop withdrawn: requests go to the engine again. */
    void withdrawAnnouncement() {
        synchronized (this) {
            announced = null;
        }
        reconsider();
    }

    /** The announcement in force, or null. */
    synchronized @Nullable Announced announcement() {
        return announced;
    }

    /** Requests forwarded and not ended. */
    synchronized int inFlight() {
        return inFlight;
    }

    /** Requests waiting. */
    synchronized int queued() {
        return queue.size();
    }

    /** The engine's state changed: the waiting are decided again. */
    @EventListener
    void onEngineStateChanged(EngineStateChanged change) {
        reconsider();
    }

    /** Decides again for every waiting request, oldest first: the engine's state changed, a stream came free. */
    void reconsider() {
        List<Runnable> answers = new ArrayList<>();
        synchronized (this) {
            if (queue.isEmpty()) {
                return;
            }
            Snapshot now = snapshot();
            Iterator<Waiter> waiting = queue.iterator();
            while (waiting.hasNext()) {
                Waiter waiter = waiting.next();
                AdmissionRules.Decision decision =
                        AdmissionRules.reconsider(now.situation(inFlight, queue.size()), waiter.waiting, now.startId());
                if (decision instanceof AdmissionRules.Decision.Hold) {
                    continue;
                }
                waiting.remove();
                Admission admission = admission(decision, now.startId());
                answers.add(waiter.answer(admission));
            }
        }
        answers.forEach(Runnable::run);
    }

    /** Forwarded (its place taken) or refused; never a hold. Under the lock. */
    private Admission admission(AdmissionRules.Decision decision, @Nullable String startId) {
        return switch (decision) {
            case AdmissionRules.Decision.Forward forward -> {
                inFlight++;
                yield new Admission.Admitted(startId, new Admission.Ticket(this::ended));
            }
            case AdmissionRules.Decision.Reject reject ->
                new Admission.Refused(
                        Duration.ofSeconds(reject.retryAfterSeconds()),
                        reject.error(),
                        reject.message(),
                        reject.closeConnection());
            case AdmissionRules.Decision.Hold hold ->
                throw new IllegalStateException("a hold is not an answer: " + hold);
        };
    }

    /**
     * A request that waits: it takes its place in the queue when its client subscribes (decided again then: it may go
     * at once, or find the queue full), and is answered when a reconsideration decides it, at the latest at its deadline.
     */
    private Mono<Admission> waiting(AdmissionRules.Waiting waiting) {
        return Mono.create(sink -> {
            Waiter waiter = new Waiter(waiting, sink, clock.instant());
            Admission answer;
            synchronized (this) {
                Snapshot now = snapshot();
                AdmissionRules.Situation situation = now.situation(inFlight, queue.size());
                AdmissionRules.Decision decision = AdmissionRules.reconsider(situation, waiting, now.startId());
                if (decision instanceof AdmissionRules.Decision.Hold && queue.size() < limits.maxQueued()) {
                    queue.addLast(waiter);
                    answer = null;
                } else if (decision instanceof AdmissionRules.Decision.Hold) {
                    // The queue filled up in the moment between: answered as a request finding it full.
                    answer = waiter.given = admission(AdmissionRules.decide(situation), now.startId());
                } else {
                    answer = waiter.given = admission(decision, now.startId());
                }
            }
            sink.onCancel(() -> left(waiter));
            if (answer != null) {
                sink.success(answer);
                return;
            }
            Duration left = Duration.between(clock.instant(), waiting.until());
            sink.onDispose(timer.schedule(this::reconsider, Math.max(0, left.toNanos()), TimeUnit.NANOSECONDS));
        });
    }

    /** The client went away while its request waited: its place in the queue, or the place it was just given, is freed. */
    private void left(Waiter waiter) {
        Admission given;
        boolean waited;
        synchronized (this) {
            waited = queue.remove(waiter);
            given = waiter.given;
        }
        if (waited) {
            events.held(Duration.between(waiter.since, clock.instant()), false);
        }
        if (given instanceof Admission.Admitted admitted) {
            admitted.ticket().close();
        }
    }

    private void ended() {
        List<Sinks.Empty<Void>> done = List.of();
        synchronized (this) {
            inFlight--;
            if (inFlight == 0 && !idle.isEmpty()) {
                done = List.copyOf(idle);
                idle.clear();
            }
        }
        done.forEach(Sinks.Empty::tryEmitEmpty);
        reconsider();
    }

    /**
     * Completes once no admitted request is in flight: counted from the admission, so a request admitted and not yet
     * sent to the engine (or not yet counted by {@link WorkInFlight}) is waited for too. At once when none is.
     */
    Mono<Void> idle() {
        synchronized (this) {
            if (inFlight == 0) {
                return Mono.empty();
            }
            Sinks.Empty<Void> sink = Sinks.empty();
            idle.add(sink);
            return sink.asMono();
        }
    }

    /** What a decision reads: the state, the start, the time, and (for a refusal) the path and its latencies. */
    private Snapshot snapshot() {
        EngineStart start = machine.start();
        Instant now = clock.instant();
        Announced known = announced;
        EngineState state = machine.current();
        // In force from the announcement until another start serves (or fails), or max-wait passed without one.
        boolean anotherStartDecided = known != null
                && start != null
                && !Objects.equals(known.startId(), start.id())
                && !AdmissionRules.startUnderWay(state);
        boolean stopAnnounced = known != null && now.isBefore(known.until()) && !anotherStartDecided;
        if (known != null && !stopAnnounced) {
            announced = null;
        }
        return new Snapshot(state, start, now, stopAnnounced);
    }

    private final class Snapshot {
        private final EngineState state;
        private final @Nullable EngineStart start;
        private final Instant at;
        private final boolean stopAnnounced;
        private @Nullable RestartPath current;
        private @Nullable RetryAfter retryAfter;

        Snapshot(EngineState state, @Nullable EngineStart start, Instant at, boolean stopAnnounced) {
            this.state = state;
            this.start = start;
            this.at = at;
            this.stopAnnounced = stopAnnounced;
        }

        Instant at() {
            return at;
        }

        @Nullable
        String startId() {
            return start == null ? null : start.id();
        }

        AdmissionRules.Situation situation(int inFlight, int queued) {
            // The path and the history are read only when the engine does not serve: a ready engine's requests cost
            // a state read.
            if (state.acceptsTraffic() && !stopAnnounced) {
                return situation(inFlight, queued, RestartPath.UNKNOWN, SERVES);
            }
            if (current == null || retryAfter == null) {
                current = expectations.path(state, path.get(), at);
                retryAfter = expectations.retryAfter(current, start, at);
            }
            return situation(inFlight, queued, current, retryAfter);
        }

        private AdmissionRules.Situation situation(int inFlight, int queued, RestartPath on, RetryAfter wait) {
            return new AdmissionRules.Situation(
                    state,
                    stopAnnounced,
                    inFlight,
                    limits.maxInFlight(),
                    queued,
                    limits.maxQueued(),
                    limits.hold(),
                    limits.maxWait(),
                    on,
                    wait,
                    at);
        }
    }

    /** One waiting request: what it waits for, its client, since when, and the answer it was given once decided. */
    private final class Waiter {
        final AdmissionRules.Waiting waiting;
        private final MonoSink<Admission> sink;
        private final Instant since;

        @Nullable
        Admission given;

        Waiter(AdmissionRules.Waiting waiting, MonoSink<Admission> sink, Instant since) {
            this.waiting = waiting;
            this.sink = sink;
            this.since = since;
        }

        /** The answer decided (under the admission's lock); the returned action delivers it and tells the meters. */
        Runnable answer(Admission admission) {
            given = admission;
            return () -> {
                events.held(Duration.between(since, clock.instant()), admission instanceof Admission.Admitted);
                sink.success(admission);
            };
        }
    }
}
