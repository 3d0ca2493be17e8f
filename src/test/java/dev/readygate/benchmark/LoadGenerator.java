package dev.readygate.benchmark;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * An open-loop load at a fixed rate: request {@code i} is due at {@code start + i / rate}, whatever happened to the
 * ones before, and its latency is measured from that intended send time, not from when a worker got to send it (so a
 * stalled server is charged for every request it delayed: no coordinated omission). A dispatcher thread hands due
 * times to workers, each with its own keep-alive connection.
 */
final class LoadGenerator {

    private final String host;
    private final int port;
    private final String path;
    private final String accept;
    private final double perSecond;
    private final int workers;
    final AtomicLong errors = new AtomicLong();
    final AtomicLong non200 = new AtomicLong();
    final AtomicLong sent = new AtomicLong();
    /** The first few errors, for the record. */
    final List<String> firstErrors = new java.util.concurrent.CopyOnWriteArrayList<>();

    LoadGenerator(String host, int port, String path, String accept, double perSecond, int workers) {
        this.host = host;
        this.port = port;
        this.path = path;
        this.accept = accept;
        this.perSecond = perSecond;
        this.workers = workers;
    }

    /** Runs for {@code duration}; returns the latencies (ms) of the requests due after {@code warmup}. */
    Samples run(Duration warmup, Duration duration, String name) throws InterruptedException {
        LinkedBlockingQueue<Long> due = new LinkedBlockingQueue<>();
        Samples latencies = new Samples(name, "ms");
        long start = System.nanoTime() + 10_000_000;
        long measureFrom = start + warmup.toNanos();
        long end = start + duration.toNanos();
        long poison = Long.MIN_VALUE;
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            threads.add(Thread.ofPlatform()
                    .daemon()
                    .name("load-" + path + "-" + w)
                    .start(() -> {
                        List<Double> mine = new ArrayList<>();
                        try (HttpConnection connection = new HttpConnection(host, port, 5_000)) {
                            while (true) {
                                long intended = due.take();
                                if (intended == poison) {
                                    break;
                                }
                                sent.incrementAndGet();
                                try {
                                    int status = connection.get(path, accept).status();
                                    if (status != 200 && status != 503) {
                                        non200.incrementAndGet();
                                    }
                                } catch (IOException ex) {
                                    errors.incrementAndGet();
                                    if (firstErrors.size() < 5) {
                                        firstErrors.add(String.format(
                                                java.util.Locale.ROOT,
                                                "%s after %.1f ms (request %d of the run)",
                                                ex,
                                                (System.nanoTime() - intended) / 1e6,
                                                sent.get()));
                                    }
                                }
                                if (intended >= measureFrom) {
                                    mine.add((System.nanoTime() - intended) / 1e6);
                                }
                            }
                        } catch (InterruptedException ex) {
                            Thread.currentThread().interrupt();
                        }
                        synchronized (latencies) {
                            mine.forEach(latencies::add);
                        }
                    }));
        }
        long interval = (long) (1e9 / perSecond);
        for (long next = start; next < end; next += interval) {
            long wait;
            while ((wait = next - System.nanoTime()) > 0) {
                LockSupport.parkNanos(wait);
            }
            due.add(next);
        }
        for (int w = 0; w < workers; w++) {
            due.add(poison);
        }
        for (Thread thread : threads) {
            thread.join(TimeUnit.SECONDS.toMillis(30));
        }
        return latencies;
    }
}
