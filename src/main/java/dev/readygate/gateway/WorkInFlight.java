package dev.readygate.gateway;

import dev.readygate.restart.Stop;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The gateway's own count of the exchanges in flight, per engine start, and of the work a start's stop lost
 * ({@link Stop.Traffic}): exact, from the exchanges themselves, not inferred from the engine's metrics. Before a start's
 * stop, the exchanges the engine cut (its connection closed, or a stall) are kept aside: an engine that crashes cuts its
 * streams before readygate sees it go. Once the stop is known ({@link #stopped}), each exchange of the start still in
 * flight ends finished (the engine's answer whole, the client went away, or it was sent again to the next start:
 * {@link ProxiedExchange#sentAgain}) or cut (anything else, and whatever ends
 * once the drain's deadline passed, {@link #cutting}); the count is given once none is left. Hears every exchange's
 * start and end on the traffic event loops: nothing here blocks.
 */
public final class WorkInFlight implements ExchangeEnds {

    /** How an exchange ended that is work the engine lost while its start ran: its connection cut, or a stall. */
    private static final Set<ExchangeEnding> CUT_BY_THE_ENGINE =
            Set.of(ExchangeEnding.ENGINE_CLOSED, ExchangeEnding.STALLED);

    /** How an exchange ended on its own after a stop: the answer reached the client whole, or the client left. */
    private static final Set<ExchangeEnding> FINISHED =
            Set.of(ExchangeEnding.COMPLETED, ExchangeEnding.CLIENT_CANCELLED);

    private final boolean counting;
    private final Map<String, Tally> starts = new HashMap<>();
    private final List<Sinks.Empty<Void>> idle = new ArrayList<>();
    private final AtomicLong cutByStops = new AtomicLong();
    private final AtomicLong tokensCutByStops = new AtomicLong();
    private int inFlight;
    private boolean cutting;

    /** @param counting whether gateway mode is on: off, no stop has a count (null, not 0) */
    public WorkInFlight(boolean counting) {
        this.counting = counting;
    }

    /** One start's exchanges. */
    private static final class Tally {
        int inFlight;
        int cutBefore;
        long cutBeforeTokens;

        @Nullable
        Stopped stopped;
    }

    /** A start's stop and what became of its exchanges in flight at it. */
    private static final class Stopped {
        final int atStop;
        int finished;
        int cut;
        long cutTokens;
        final Sinks.One<Stop.Traffic> settled = Sinks.one();

        Stopped(int atStop) {
            this.atStop = atStop;
        }

        Stop.Traffic count() {
            return new Stop.Traffic(atStop, finished, cut, cutTokens);
        }
    }

    @Override
    public synchronized void began(@Nullable String startId) {
        inFlight++;
        if (startId != null) {
            starts.computeIfAbsent(startId, id -> new Tally()).inFlight++;
        }
    }

    @Override
    public void ended(ProxiedExchange exchange) {
        Stopped settled = null;
        synchronized (this) {
            String startId = exchange.startId();
            Tally tally = startId == null ? null : starts.get(startId);
            if (tally != null) {
                tally.inFlight--;
                settled = count(tally, exchange);
                if (settled != null) {
                    starts.remove(startId);
                }
            }
        }
        if (settled != null) {
            settled.settled.tryEmitValue(settled.count());
        }
    }

    /** The client has the whole answer (or was cut): the drain need not wait for this exchange any more. */
    @Override
    public void released() {
        List<Sinks.Empty<Void>> nowIdle = List.of();
        synchronized (this) {
            inFlight--;
            if (inFlight == 0 && !idle.isEmpty()) {
                nowIdle = List.copyOf(idle);
                idle.clear();
            }
        }
        nowIdle.forEach(Sinks.Empty::tryEmitEmpty);
    }

    /** Counts an exchange's end in its start's tally; the stop it settled, if it was the last in flight at it. */
    private @Nullable Stopped count(Tally tally, ProxiedExchange exchange) {
        int tokens = exchange.seen().tokenEvents();
        Stopped stopped = tally.stopped;
        // An attempt sent again (retry-before-first-byte) lost nothing: its client saw nothing of it, and the request
        // lives on in its next attempt. Before the stop it is not the start's loss; after it, it ended without loss.
        boolean lost = !exchange.sentAgain();
        if (stopped == null) {
            if (lost && CUT_BY_THE_ENGINE.contains(exchange.ending())) {
                tally.cutBefore++;
                tally.cutBeforeTokens += tokens;
            }
            return null;
        }
        if (!lost || (!cutting && FINISHED.contains(exchange.ending()))) {
            stopped.finished++;
        } else {
            stopped.cut++;
            stopped.cutTokens += tokens;
            cutByStops.incrementAndGet();
            tokensCutByStops.addAndGet(tokens);
        }
        return tally.inFlight == 0 ? stopped : null;
    }

    /**
     * A start stopped: its count, once every exchange of it in flight now has ended; at once (all 0) when none is.
     * Empty when gateway mode is off. Asked again before it is given, the same count.
     */
    public Mono<Stop.Traffic> stopped(String startId) {
        if (!counting) {
            return Mono.empty();
        }
        Stopped stopped;
        boolean settledNow;
        synchronized (this) {
            Tally tally = starts.computeIfAbsent(startId, id -> new Tally());
            if (tally.stopped == null) {
                // The engine's cuts before the stop are the start's work lost too.
                tally.stopped = new Stopped(tally.cutBefore + tally.inFlight);
                tally.stopped.cut = tally.cutBefore;
                tally.stopped.cutTokens = tally.cutBeforeTokens;
                cutByStops.addAndGet(tally.cutBefore);
                tokensCutByStops.addAndGet(tally.cutBeforeTokens);
            }
            stopped = tally.stopped;
            settledNow = tally.inFlight == 0;
            if (settledNow) {
                // Counted: a start's tally is kept only while its stop waits for exchanges in flight.
                starts.remove(startId);
            }
        }
        if (settledNow) {
            stopped.settled.tryEmitValue(stopped.count());
        }
        return stopped.settled.asMono();
    }

    /** The drain's deadline passed: every exchange that ends from now on was cut. */
    synchronized void cutting() {
        cutting = true;
    }

    /** Completes once no exchange is in flight, to its client's last byte (at once when none is). */
    Mono<Void> idle() {
        Sinks.Empty<Void> sink = Sinks.empty();
        synchronized (this) {
            if (inFlight > 0) {
                idle.add(sink);
                return sink.asMono();
            }
        }
        return Mono.empty();
    }

    /** Exchanges in flight now, of every start: forwarded and not yet released. */
    public synchronized int inFlight() {
        return inFlight;
    }

    /** Requests cut by engine stops since readygate started (the engine's cuts and the drains' deadlines). */
    public long cutByStops() {
        return cutByStops.get();
    }

    /** The token-carrying events the requests cut by stops had passed to their clients. */
    public long tokensCutByStops() {
        return tokensCutByStops.get();
    }
}
