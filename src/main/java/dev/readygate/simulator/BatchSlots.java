package dev.readygate.simulator;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * The engine's batch, {@code max-num-seqs} sequences at most (vLLM's {@code --max-num-seqs}): a request beyond them
 * waits, first come first served, counted in {@code vllm:num_requests_waiting}, until a running one finishes. A waiting
 * request whose client goes away leaves the queue. Thread-safe; never blocks.
 */
final class BatchSlots {

    private final int limit;
    private final AtomicInteger waitingGauge;
    private final Deque<MonoSink<Boolean>> waiting = new ArrayDeque<>();
    private int taken;

    /**
     * @param limit how many sequences run at once
     * @param waitingGauge the engine's {@code vllm:num_requests_waiting}
     */
    BatchSlots(int limit, AtomicInteger waitingGauge) {
        this.limit = limit;
        this.waitingGauge = waitingGauge;
    }

    /** {@code work}, once a sequence of the batch is free; the sequence is free again when it ends. */
    <T> Flux<T> admitted(Flux<T> work) {
        return Mono.<Boolean>create(this::take).flatMapMany(slot -> work.doFinally(signal -> release()));
    }

    private void take(MonoSink<Boolean> sink) {
        boolean now;
        synchronized (this) {
            now = taken < limit;
            if (now) {
                taken++;
            } else {
                waiting.addLast(sink);
                waitingGauge.incrementAndGet();
            }
        }
        if (now) {
            sink.success(true);
            return;
        }
        sink.onCancel(() -> {
            boolean removed;
            synchronized (this) {
                removed = waiting.remove(sink);
            }
            if (removed) {
                waitingGauge.decrementAndGet();
            }
        });
    }

    private void release() {
        MonoSink<Boolean> next;
        synchronized (this) {
            next = waiting.pollFirst();
            if (next == null) {
                taken--;
            }
        }
        if (next != null) {
            // The freed sequence goes to the request that waited longest.
            waitingGauge.decrementAndGet();
            next.success(true);
        }
    }
}
