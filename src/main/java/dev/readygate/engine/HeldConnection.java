package dev.readygate.engine;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.netty.tcp.TcpClient;

/**
 * One idle TCP connection to the engine's port, held while someone waits for it to close: when the engine process
 * exits, the kernel closes it (FIN or RST) at once, sooner than the next {@code /health} poll would see the port
 * refuse. A close is a reason to check, never a verdict: uvicorn and llama-server close idle connections on their own
 * (llama-server after 5 s without a request). A connection that closes within {@link #STEADY} of opening (or cannot be
 * opened) makes the next one wait, doubling from {@link #FIRST_BACK_OFF} up to {@link #MAX_BACK_OFF}, so a server that
 * keeps closing it at once costs a bounded number of checks; one that lived longer resets the wait. Nothing is ever
 * written on it; whatever the server sends is read and dropped (reading is what sees the close).
 */
final class HeldConnection {

    /** A connection that lived this long closed for a reason of its own (an idle timeout, an exit), not at once. */
    static final Duration STEADY = Duration.ofSeconds(1);

    static final Duration FIRST_BACK_OFF = Duration.ofMillis(250);

    static final Duration MAX_BACK_OFF = Duration.ofSeconds(30);

    private final TcpClient tcp;
    private final LongSupplier ticker;
    private final Scheduler scheduler;
    private final AtomicReference<@Nullable Held> held = new AtomicReference<>();
    private volatile Duration backOff = Duration.ZERO;
    private volatile boolean disposed;

    /** One connection's life: the connect and the connection to dispose, and the signal of its end. */
    private static final class Held {
        final Sinks.Empty<Void> ended = Sinks.empty();
        final Disposable.Composite resources = Disposables.composite();
        volatile long openedAt = Long.MIN_VALUE;
    }

    /**
     * @param tcp where the engine listens, on the engine client's event loop
     * @param ticker nanoseconds, for how long a connection lived
     * @param scheduler where the back-off waits
     */
    HeldConnection(TcpClient tcp, LongSupplier ticker, Scheduler scheduler) {
        this.tcp = tcp;
        this.ticker = ticker;
        this.scheduler = scheduler;
    }

    /**
     * Completes when the held connection closes or could not be opened; opens one (after the back-off) when none is
     * held. Cancelling the returned {@link Mono} keeps the connection: the next call waits on the same one.
     */
    Mono<Void> closed() {
        if (disposed) {
            return Mono.never();
        }
        Held current = held.get();
        if (current == null) {
            Held fresh = new Held();
            if (held.compareAndSet(null, fresh)) {
                open(fresh);
                current = fresh;
            } else {
                current = held.get();
                if (current == null) {
                    return Mono.empty();
                }
            }
        }
        return current.ended.asMono();
    }

    private void open(Held connection) {
        connection.resources.add(Mono.delay(backOff, scheduler)
                .then(tcp.connect())
                .subscribe(
                        opened -> {
                            connection.openedAt = ticker.getAsLong();
                            opened.onDispose(() -> ended(connection));
                            // Reading is what notices the peer's FIN; nothing is expected, anything is dropped.
                            opened.inbound().receive().subscribe(null, error -> opened.dispose());
                            connection.resources.add(opened);
                        },
                        error -> ended(connection)));
    }

    private void ended(Held connection) {
        long openedAt = connection.openedAt;
        Duration lived = openedAt == Long.MIN_VALUE ? Duration.ZERO : Duration.ofNanos(ticker.getAsLong() - openedAt);
        backOff = nextBackOff(backOff, lived);
        held.compareAndSet(connection, null);
        connection.ended.tryEmitEmpty();
    }

    /** The wait before the next connection, after one that lived {@code lived}. */
    static Duration nextBackOff(Duration current, Duration lived) {
        if (lived.compareTo(STEADY) >= 0) {
            return Duration.ZERO;
        }
        Duration doubled = current.isZero() ? FIRST_BACK_OFF : current.multipliedBy(2);
        return doubled.compareTo(MAX_BACK_OFF) > 0 ? MAX_BACK_OFF : doubled;
    }

    /** Closes the connection held now, and holds none again. */
    void dispose() {
        disposed = true;
        Held current = held.getAndSet(null);
        if (current != null) {
            current.resources.dispose();
        }
    }
}
